import Foundation
import SluiceCore
import Testing

@testable import DownloadEngine

/// A download that starts over (the remote changed) must not let its next attempt's hasher
/// follow the old attempt's prefix: under CI's load `ResumeTests.aFileChangingMidDownloadNeverYieldsAMix`
/// once reported a SHA-256 of neither version. The hasher hashed what the old map said was on
/// disk, from a file that then held its new reservation's zeros.
@Suite struct StartOverStateTests {
    @Test func startingOverLeavesNoPrefixOnDisk() {
        let state = DownloadState()
        let total: Int64 = 4 << 20
        state.setRemote(
            .init(totalBytes: total, acceptsRanges: true, validators: nil, finalURL: nil, fileName: nil),
            map: SegmentMap(total: total, written: [0..<(1 << 20)], parts: 4))
        #expect(state.contiguousPrefix == 1 << 20)
        state.startOver()
        #expect(state.contiguousPrefix == 0)
    }
}
