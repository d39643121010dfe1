/// BLAKE2b-512 (RFC 7693), unkeyed: what minisign hashes a file with before it signs it
/// (a prehashed signature, `ED`). swift-crypto has no BLAKE2; this follows the RFC's
/// reference and is checked against coreutils' `b2sum` and the RFC's test vector. Whole
/// blocks are compressed straight from the caller's buffer, with the state on the stack:
/// it hashes files of gigabytes.
public struct BLAKE2b: Sendable {
    private static let iv: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]

    /// The message schedule: ten permutations of the sixteen words, rounds 10 and 11
    /// reusing the first two.
    private static let sigma: [Int] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3,
        11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4,
        7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8,
        9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13,
        2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9,
        12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11,
        13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10,
        6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5,
        10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0,
    ]

    private var h: [UInt64]
    /// Bytes hashed so far (a 128-bit counter in the RFC; 2^64 bytes is far beyond any file).
    private var counter: UInt64 = 0
    /// The last block, kept until more bytes come: the final block is compressed flagged.
    private var buffer: [UInt8] = []

    public init() {
        h = Self.iv
        h[0] ^= 0x0101_0000 ^ 64
        buffer.reserveCapacity(128)
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        Array(bytes).withUnsafeBytes { update($0) }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var input = bytes[...]
        while !input.isEmpty {
            if buffer.count == 128 {
                counter &+= 128
                buffer.withUnsafeBytes { compress($0, last: false) }
                buffer.removeAll(keepingCapacity: true)
            }
            // Whole blocks straight from the input, all but the last byte's block: the final
            // one is kept for `finalize`.
            if buffer.isEmpty, input.count > 128 {
                counter &+= 128
                compress(UnsafeRawBufferPointer(rebasing: input.prefix(128)), last: false)
                input = input.dropFirst(128)
                continue
            }
            let taken = input.prefix(128 - buffer.count)
            buffer.append(contentsOf: taken)
            input = input.dropFirst(taken.count)
        }
    }

    /// The 64-byte digest.
    public func finalize() -> [UInt8] {
        var copy = self
        copy.counter &+= UInt64(copy.buffer.count)
        let block = copy.buffer + [UInt8](repeating: 0, count: 128 - copy.buffer.count)
        block.withUnsafeBytes { copy.compress($0, last: true) }
        return copy.h.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
    }

    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = BLAKE2b()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// One 128-byte block into the state.
    private mutating func compress(_ block: UnsafeRawBufferPointer, last: Bool) {
        let counter = counter
        h.withUnsafeMutableBufferPointer { h in
            Self.sigma.withUnsafeBufferPointer { sigma in
                withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 32) { words in
                    let m = UnsafeMutableBufferPointer(rebasing: words[0..<16])
                    let v = UnsafeMutableBufferPointer(rebasing: words[16..<32])
                    for i in 0..<16 { m[i] = UInt64(littleEndian: block.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
                    for i in 0..<8 {
                        v[i] = h[i]
                        v[i + 8] = Self.iv[i]
                    }
                    v[12] ^= counter
                    if last { v[14] = ~v[14] }
                    @inline(__always) func mix(_ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
                        v[a] = v[a] &+ v[b] &+ x
                        v[d] = (v[d] ^ v[a]).rotatedRight(32)
                        v[c] = v[c] &+ v[d]
                        v[b] = (v[b] ^ v[c]).rotatedRight(24)
                        v[a] = v[a] &+ v[b] &+ y
                        v[d] = (v[d] ^ v[a]).rotatedRight(16)
                        v[c] = v[c] &+ v[d]
                        v[b] = (v[b] ^ v[c]).rotatedRight(63)
                    }
                    for round in 0..<12 {
                        let s = (round % 10) * 16
                        mix(0, 4, 8, 12, m[sigma[s]], m[sigma[s + 1]])
                        mix(1, 5, 9, 13, m[sigma[s + 2]], m[sigma[s + 3]])
                        mix(2, 6, 10, 14, m[sigma[s + 4]], m[sigma[s + 5]])
                        mix(3, 7, 11, 15, m[sigma[s + 6]], m[sigma[s + 7]])
                        mix(0, 5, 10, 15, m[sigma[s + 8]], m[sigma[s + 9]])
                        mix(1, 6, 11, 12, m[sigma[s + 10]], m[sigma[s + 11]])
                        mix(2, 7, 8, 13, m[sigma[s + 12]], m[sigma[s + 13]])
                        mix(3, 4, 9, 14, m[sigma[s + 14]], m[sigma[s + 15]])
                    }
                    for i in 0..<8 { h[i] ^= v[i] ^ v[i + 8] }
                }
            }
        }
    }
}

extension UInt64 {
    fileprivate func rotatedRight(_ count: UInt64) -> UInt64 { (self >> count) | (self << (64 - count)) }
}
