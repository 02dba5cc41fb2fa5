// The one definition of the model descriptor: mlbc copies this file into every generated
// header (it is built into the compiler as the template "mlbc_model_desc") and the runtime
// includes it. Guarded so that several generated headers can be included together.
#ifndef MLBC_MODEL_DESC_DEFINED
#define MLBC_MODEL_DESC_DEFINED
/* Element types use ONNX TensorProto codes: 1 float, 2 uint8, 3 int8, 4 uint16, 5 int16,
 * 6 int32, 7 int64, 9 bool (one byte), 10 float16 (raw bits), 11 double, 12 uint32,
 * 13 uint64, 16 bfloat16 (raw bits). */
typedef struct mlbc_tensor_desc {
    const char *name;       /* ONNX name */
    int dtype;              /* ONNX element type code */
    int rank;
    const int64_t *shape;
    int64_t count;          /* elements */
    int64_t bytes;
} mlbc_tensor_desc;

typedef struct mlbc_model_desc {
    const char *name;       /* symbol prefix */
    size_t ctx_size;
    int num_args;
    const mlbc_tensor_desc *args;
    int num_results;
    const mlbc_tensor_desc *results;
    void (*init)(void *ctx);
    int (*run)(void *ctx);
    void *(*arg_data)(void *ctx, int i);
    void *(*result_data)(void *ctx, int i);
    int (*lookup_arg_index)(const char *onnx_name);
    int (*lookup_result_index)(const char *onnx_name);
} mlbc_model_desc;
#endif
