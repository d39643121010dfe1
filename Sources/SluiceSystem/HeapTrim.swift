/// Hands the heap's free memory back to the system (glibc's `malloc_trim`): after a burst
/// of allocations that are freed (a start loading every stored job), the process's
/// resident size otherwise stays at the burst's peak. A no-op where there is no glibc.
public enum HeapTrim {
    public static func releaseFreeMemory() {
        #if canImport(Glibc)
        // Not in Swift's Glibc module (malloc.h): looked up once by name.
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }
}
