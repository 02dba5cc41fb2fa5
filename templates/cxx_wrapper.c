// --cxx-wrapper: the class LLVM's ReleaseModeModelRunner<T> instantiates for a TF-AOT
// model. LLVM looks features up as FeedPrefix + name ("feed_" by default) and the decision
// as FetchPrefix + name ("fetch_"); both the prefixed and the plain ONNX names are found.
#ifdef __cplusplus
#include <cstring>
#include <string>

namespace mlbc {
/* Usage in LLVM: ReleaseModeModelRunner<mlbc::${NAME}>(Ctx, FeatureMap, DecisionName). */
class ${NAME} {
public:
    ${NAME}() { ${NAME}_init(&ctx_); }
    int LookupArgIndex(const std::string &name) const
    {
        return lookup(name, "feed_", ${NAME}_lookup_arg_index);
    }
    int LookupResultIndex(const std::string &name) const
    {
        return lookup(name, "fetch_", ${NAME}_lookup_result_index);
    }
    void *arg_data(int i) { return ${NAME}_arg_data(&ctx_, i); }
    void *result_data(int i) { return ${NAME}_result_data(&ctx_, i); }
    int Run() { return ${NAME}_run(&ctx_); }

private:
    static int lookup(const std::string &name, const char *prefix, int (*find)(const char *))
    {
        int i = find(name.c_str());
        size_t n = std::strlen(prefix);
        if (i < 0 && name.compare(0, n, prefix) == 0)
            i = find(name.c_str() + n);
        return i;
    }
    ${NAME}_ctx ctx_;
};
} /* namespace mlbc */
#endif
