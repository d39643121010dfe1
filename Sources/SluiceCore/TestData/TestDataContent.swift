/// The content of `/testdata/SIZE?seed=N`: the byte at offset `o` is byte `o % 8`
/// (little-endian) of `splitmix64(seed + o / 8)`. Any slice can be computed on its own,
/// so a server never holds more than the chunk it is sending.
public struct TestDataContent: Sendable, Hashable {
    public var seed: UInt64

    public init(seed: UInt64 = 0) {
        self.seed = seed
    }

    /// One step of splitmix64 as a pure function of its input.
    @inlinable
    public static func splitmix64(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fills `buffer` with the bytes starting at absolute offset `offset`.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int64) {
        guard !buffer.isEmpty else { return }
        var position = 0
        var word = UInt64(offset) / 8
        var inWord = Int(UInt64(offset) % 8)
        // Head: the tail of a partial word.
        if inWord != 0 {
            let value = Self.splitmix64(seed &+ word)
            while inWord < 8, position < buffer.count {
                buffer[position] = UInt8(truncatingIfNeeded: value >> (UInt64(inWord) * 8))
                position += 1
                inWord += 1
            }
            word += 1
        }
        // Body: whole words, stored little-endian.
        while buffer.count - position >= 8 {
            buffer.storeBytes(of: Self.splitmix64(seed &+ word).littleEndian, toByteOffset: position, as: UInt64.self)
            position += 8
            word += 1
        }
        // Tail: the head of a partial word.
        if position < buffer.count {
            let value = Self.splitmix64(seed &+ word)
            var shift: UInt64 = 0
            while position < buffer.count {
                buffer[position] = UInt8(truncatingIfNeeded: value >> shift)
                position += 1
                shift += 8
            }
        }
    }

    /// The bytes `range` as an array; for tests and small slices.
    public func bytes(_ range: Range<Int64>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(range.count)) { buffer, count in
            fill(UnsafeMutableRawBufferPointer(buffer), offset: range.lowerBound)
            count = Int(range.count)
        }
    }
}
