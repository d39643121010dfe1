// The C library of the platform, for this module and every module that imports it: the one
// place that names it, where each file once repeated `#if canImport(Glibc) import Glibc …`.
// (SluiceCore, below this module, names it itself for `inet_pton`.)
#if canImport(Glibc)
@_exported public import Glibc
#elseif canImport(Musl)
@_exported public import Musl
#elseif canImport(Darwin)
@_exported public import Darwin
#endif
