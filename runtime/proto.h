/* proto.h - Protobuf SerDes of runtime/mlbc.proto (proto.c; internal). */
#ifndef MLBC_RT_PROTO_H
#define MLBC_RT_PROTO_H

#include "json.h"

/* 0 if this host can use the protobuf framing (tensors are little-endian bytes). */
int proto_check_host(char *err, size_t errlen);

/* An Observation over runner r's input buffers, packed from them as they are at each
 * proto_obs_pack; NULL when out of memory. */
typedef struct proto_obs proto_obs;
proto_obs *proto_obs_new(const mlbc_runner *r);
void proto_obs_free(proto_obs *o);
/* Appends the packed Observation (context, index and the inputs' contents) to b. */
void proto_obs_pack(proto_obs *o, const char *context, int64_t index, jbuf *b);

/* The largest Advice message for this advice spec that is worth reading. */
size_t proto_advice_limit(const mlbc_tensor_spec *advice);
/* Unpacks an Advice message of len bytes into dst (the advice's bytes): 0, or -1 and err
 * says what was wrong (not a message, no tensor, another element type (none included), a
 * shape other than the spec's but for dimensions of 1, another size). */
int proto_advice_unpack(const mlbc_tensor_spec *advice, const uint8_t *msg, size_t len,
                        void *dst, char *err, size_t errlen);

#endif
