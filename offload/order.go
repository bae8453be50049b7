package offload

// Order returns keys, distinct and given in the order they were inserted,
// in the order in which the LLVM container o names iterates over them: what
// clang-offload-packager's maps do to an image's strings (spec §1.6), and
// clang-offload-bundler's llvm::StringMap to a bundle's entries.
func (o MapOrder) Order(keys []string) []string { return orderedKeys(o, keys) }
