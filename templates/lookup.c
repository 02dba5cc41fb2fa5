// Linear search is right here: policies have tens of features and lookups happen once,
// when a runner binds its buffers.
static int mlbc_lookup(const mlbc_tensor_desc *d, int n, const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return i;
    return -1;
}
