import Testing

@testable import SluiceCore

@Suite struct SegmentMapTests {
    @Test func splitsEvenlyAndClaimsEachPartOnce() {
        var map = SegmentMap(total: 10 << 20, parts: 4, minimumSplit: 1 << 20)
        let claims = (0..<4).compactMap { _ in map.claim() }
        #expect(claims.map(\.range) == [0..<2_621_440, 2_621_440..<5_242_880, 5_242_880..<7_864_320, 7_864_320..<10_485_760])
        #expect(Set(claims.map(\.segment)).count == 4)
    }

    @Test func oddSizesAreCoveredExactly() {
        let map = SegmentMap(total: 7_000_003, parts: 3, minimumSplit: 1000)
        #expect(map.segments.first?.start == 0)
        #expect(map.segments.last?.end == 7_000_003)
        #expect(zip(map.segments, map.segments.dropFirst()).allSatisfy { $0.end == $1.start })
    }

    /// A remote may announce any size up to Int64.max: no arithmetic on it may trap.
    @Test(arguments: [Int64.max, Int64.max - 1, Int64(1) << 62, (Int64(1) << 62) + 7])
    func hugeAnnouncedSizesNeverOverflow(total: Int64) {
        for parts in [1, 3, 4, 16] {
            var map = SegmentMap(total: total, parts: parts, minimumSplit: 1 << 20)
            #expect(map.segments.count == parts)
            #expect(map.segments.first?.start == 0)
            #expect(map.segments.last?.end == total)
            #expect(zip(map.segments, map.segments.dropFirst()).allSatisfy { $0.end == $1.start && $0.start < $0.end })
            // Claims, writes, steals and releases at the far end of the range.
            var claims = (0..<parts).compactMap { _ in map.claim() }
            #expect(claims.count == parts)
            let last = claims[claims.count - 1]
            #expect(map.reserve(Int64.max, segment: last.segment) == last.range.upperBound - last.range.lowerBound)
            map.commit(segment: last.segment)
            if let stolen = map.claim() { claims.append(stolen) }
            #expect(map.writtenBytes <= total)
            #expect(map.isComplete == (parts == 1))
            map.releaseAll()
        }
        let resumed = SegmentMap(total: Int64.max, written: [0..<10, (Int64.max - 10)..<Int64.max], parts: 4)
        #expect(resumed.writtenBytes == 20)
        #expect(resumed.segments.last?.end == Int64.max)
    }

    @Test func smallFilesGetFewerSegments() {
        #expect(SegmentMap(total: 1, parts: 16).segments.count == 1)
        #expect(SegmentMap(total: 3 << 20, parts: 16, minimumSplit: 1 << 20).segments.count == 3)
    }

    @Test func zeroAndOneByteFiles() {
        var empty = SegmentMap(total: 0, parts: 4)
        #expect(empty.isComplete)
        #expect(empty.claim() == nil)
        var one = SegmentMap(total: 1, parts: 4)
        #expect(!one.isComplete)
        let claim = one.claim()
        #expect(claim?.range == 0..<1)
        #expect(one.record(5, segment: claim!.segment) == 1)
        #expect(one.isComplete)
        #expect(one.writtenBytes == 1)
    }

    @Test func anIdleWorkerStealsHalfOfTheLargestRemainder() {
        var map = SegmentMap(total: 8 << 20, parts: 2, minimumSplit: 1 << 20)
        let a = map.claim()!
        let b = map.claim()!
        map.record(4 << 20, segment: a.segment)  // a is done
        map.record(1 << 20, segment: b.segment)  // b has 3 MiB left
        let stolen = map.claim()!
        #expect(stolen.range == (5 << 20) + (3 << 19)..<(8 << 20))
        #expect(map.segment(b.segment)?.end == (5 << 20) + (3 << 19))
        // b's next write is clipped at its new end.
        #expect(map.record(4 << 20, segment: b.segment) == (3 << 19))
        #expect(!map.isComplete)
        map.record(3 << 19, segment: stolen.segment)
        #expect(map.isComplete)
    }

    @Test func nothingIsStolenBelowTheMinimumSplit() {
        var map = SegmentMap(total: 2 << 20, parts: 1, minimumSplit: 1 << 20)
        let a = map.claim()!
        map.record(1, segment: a.segment)
        #expect(map.claim() == nil)
    }

    @Test func bytesBeingWrittenAreNeverHandedToAnotherWorker() {
        var map = SegmentMap(total: 4 << 20, parts: 1, minimumSplit: 1 << 20)
        let a = map.claim()!
        #expect(map.reserve(3 << 20, segment: a.segment) == 3 << 20)
        // Only 1 MiB is left unreserved: too little to split.
        #expect(map.claim() == nil)
        #expect(map.writtenRanges.isEmpty)
        map.commit(segment: a.segment)
        #expect(map.writtenRanges == [0..<(3 << 20)])
    }

    @Test func abandonedWritesAreNotCounted() {
        var map = SegmentMap(total: 100, parts: 1, minimumSplit: 1)
        let a = map.claim()!
        _ = map.reserve(50, segment: a.segment)
        map.abandon(segment: a.segment)
        #expect(map.writtenBytes == 0)
        #expect(map.remainingRange(a.segment) == 0..<100)
    }

    @Test func rebuiltFromCheckpointLeavesOnlyGapsToFetch() {
        var map = SegmentMap(total: 10, written: [0..<3, 5..<6, 2..<4], parts: 2, minimumSplit: 1)
        #expect(map.writtenRanges == [0..<4, 5..<6])
        #expect(map.writtenBytes == 5)
        var claimed: [Range<Int64>] = []
        while let claim = map.claim() {
            claimed.append(claim.range)
            map.record(Int64(claim.range.count), segment: claim.segment)
        }
        #expect(claimed.sorted { $0.lowerBound < $1.lowerBound }.reduce(0) { $0 + $1.count } == 5)
        #expect(claimed.allSatisfy { !$0.overlaps(0..<4) && !$0.overlaps(5..<6) })
        #expect(map.isComplete)
    }

    @Test func completionIsCoverageNotCounting() {
        var map = SegmentMap(total: 10, written: [0..<10], parts: 1, minimumSplit: 1)
        #expect(map.isComplete)
        map = SegmentMap(total: 10, written: [0..<5, 6..<10], parts: 1, minimumSplit: 1)
        #expect(!map.isComplete)
        #expect(map.writtenBytes == 9)
    }

    /// The hasher's prefix, computed without merging, agrees with the merged ranges at
    /// every step of workers writing, stealing and finishing in a seeded random order.
    @Test(arguments: [1, 2, 3, 4, 5])
    func thePrefixMatchesTheMergedRangesThroughStealing(seed: UInt64) {
        var step: UInt64 = 0
        func random() -> UInt64 {
            step += 1
            return TestDataContent.splitmix64(seed << 32 | step)
        }
        var map = SegmentMap(total: 1000, written: [0..<37, 300..<420], parts: 4, minimumSplit: 16)
        var claims = (0..<4).compactMap { _ in map.claim() }.map(\.segment)
        func expectedPrefix() -> Int64 {
            guard let first = map.writtenRanges.first, first.lowerBound == 0 else { return 0 }
            return first.upperBound
        }
        #expect(map.writtenPrefix == 37)
        while !claims.isEmpty {
            let index = Int(random() % UInt64(claims.count))
            let segment = claims[index]
            if map.reserve(Int64(random() % 40) + 1, segment: segment) > 0 {
                map.commit(segment: segment)
            }
            #expect(map.writtenPrefix == expectedPrefix())
            if map.segment(segment)?.isFinished ?? true {
                map.release(segment: segment)
                if let next = map.claim() { claims[index] = next.segment } else { claims.remove(at: index) }
            }
        }
        #expect(map.isComplete)
        #expect(map.writtenPrefix == 1000)
    }
}

extension SegmentMap {
    func remainingRange(_ id: Int) -> Range<Int64>? {
        segment(id).map { $0.next..<$0.end }
    }
}
