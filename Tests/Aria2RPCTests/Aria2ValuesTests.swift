import Aria2RPC
import Foundation
import SluiceCore
import Testing

/// aria2's value syntax: GIDs, sizes, the piece map.
@Suite struct Aria2ValuesTests {
    @Test func aGIDIsTheJobIDsNumberInHexAndLeadsBack() {
        #expect(Aria2GID.of(jobID: "0000000000000") == "0000000000000000")
        #expect(Aria2GID.of(jobID: "3w5e11264sgsf") == "ffffffffffffffff")
        for _ in 0..<200 {
            let number = UInt64.random(in: .min ... .max)
            let text = String(number, radix: 36)
            let id = String(repeating: "0", count: 13 - text.count) + text
            let gid = Aria2GID.of(jobID: id)
            #expect(gid.count == 16 && gid.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(Aria2GID.jobID(of: gid) == id)
        }
    }

    @Test(arguments: ["", "abc", "000000000000000", "00000000000000000", "000000000000000g", "-000000000000001", "+00000000000000f"])
    func anythingButSixteenHexDigitsIsNoGID(_ text: String) {
        #expect(Aria2GID.jobID(of: text) == nil)
    }

    @Test func sizesInAria2sSyntax() {
        #expect(Aria2Size.parse("0") == 0)
        #expect(Aria2Size.parse("1024") == 1024)
        #expect(Aria2Size.parse("512K") == 512 << 10)
        #expect(Aria2Size.parse("2m") == 2 << 20)
        for bad in ["", "K", "-1", "1G", "1.5M", "0x10", "99999999999999999M", "１２"] {
            #expect(Aria2Size.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func theBitfieldSetsAPieceOnlyWhenItIsWhollyWritten() {
        let mib: Int64 = 1 << 20
        let pieces = Aria2Pieces(total: 3 * mib, done: [0..<mib, 2 * mib..<(3 * mib)])
        #expect(pieces.count == 3 && pieces.length == mib)
        #expect(pieces.bitfield == "a0")
        // Two ranges that touch make one written piece; a piece short of one byte is not.
        #expect(Aria2Pieces(total: 2 * mib, done: [0..<(mib / 2), mib / 2..<mib, mib..<(2 * mib - 1)]).bitfield == "80")
        let big = Aria2Pieces(total: 10 << 30, done: [])
        #expect(big.length == 4 * mib && big.count == 2560 && big.bitfield?.count == 640)
        #expect(Aria2Pieces(total: nil, done: []).bitfield == nil)
        #expect(Aria2Pieces(total: 0, done: []).count == 0)
    }
}

/// aria2's options mapped to a job's fields; `dir` and `out` never leave the documents.
@Suite struct Aria2OptionsTests {
    let documents = "/srv/sluice/documents"

    func options(_ members: [(String, JSONValue)]) throws(Aria2Failure) -> Aria2JobOptions {
        try Aria2JobOptions(.object(members), documents: documents)
    }

    @Test func whatAFrontEndSendsIsMapped() throws {
        let mapped = try options([
            ("dir", .string(documents + "/")), ("out", .string("a.iso")), ("split", .string("8")),
            ("max-connection-per-server", .string("2")), ("max-download-limit", .string("2M")),
            ("checksum", .string("SHA-256=" + String(repeating: "AB", count: 32))), ("pause", .string("true")),
            ("header", .array([.string("Cookie: a=b"), .string("X-Token:  t ")])), ("user-agent", .string("ua")),
            ("referer", .string("*")), ("continue", .string("true")), ("all-proxy", .string("http://p:3128")),
        ])
        #expect(mapped.filename == "a.iso")
        #expect(mapped.connections == 2)
        #expect(mapped.limitRate == .set(2 << 20))
        #expect(mapped.checksum == Checksum(.sha256, hex: String(repeating: "ab", count: 32)))
        #expect(
            try options([("checksum", .string("md5=B1946AC92492D2347C6235B4D2611184"))]).checksum?.description
                == "md5=b1946ac92492d2347c6235b4d2611184")
        #expect(mapped.paused == true)
        #expect(mapped.headers == ["Cookie": "a=b", "X-Token": "t", "User-Agent": "ua"])
        #expect(mapped.proxy == "http://p:3128")
        #expect(try options([("split", .string("64"))]).connections == 16)
        #expect(try options([("max-download-limit", .string("0"))]).limitRate == .removed)
    }

    @Test(arguments: [
        "/tmp", "/srv/sluice/documents/../cache", "/srv/sluice/documents/sub/../../x", "/srv/sluice", "srv/sluice/documents",
        "/srv/sluice/documents/.", "~/.ssh", "/srv/sluice/documentsX", "sub", "/srv/sluice/documents/a\u{202E}b",
    ])
    func aDirOutsideTheDocumentsIsRefused(_ dir: String) {
        #expect(throws: Aria2Failure.self) { try options([("dir", .string(dir))]) }
    }

    @Test func aDirUnderTheDocumentsIsItsSubDirectory() throws {
        #expect(try options([("dir", .string(documents + "/music"))]).directory == "music")
        #expect(try options([("dir", .string(documents + "//a/b/"))]).directory == "a/b")
        let itself = try options([("dir", .string(documents))])
        #expect(itself.directory == nil && itself.namesDirectory)
        #expect(try options([]).namesDirectory == false)
    }

    @Test(arguments: ["../x", "a/b", "/etc/passwd", ".", "..", "", "a\\b"])
    func anOutThatLeavesTheDirectoryIsRefused(_ out: String) {
        #expect(throws: Aria2Failure.self) { try options([("out", .string(out))]) }
    }

    @Test func wrongValuesAreRefusedNotGuessed() {
        for (name, value) in [
            ("split", "0"), ("split", "many"), ("max-download-limit", "-1"), ("checksum", "md5=00"),
            ("checksum", "sha-256=abc"), ("pause", "yes"), ("header", "no colon"),
        ] {
            #expect(throws: Aria2Failure.self, "\(name)=\(value)") { try options([(name, .string(value))]) }
        }
        #expect(throws: Aria2Failure.self) { try Aria2JobOptions(.array([]), documents: documents) }
    }

    @Test func globalOptionsReachTheQueue() throws {
        let global = try Aria2GlobalOptions(
            .object([("max-concurrent-downloads", .string("7")), ("max-overall-download-limit", .string("1M")), ("log", .string("x"))]))
        #expect(global.maxActive == 7 && global.limitRate == .set(1 << 20))
        #expect(throws: Aria2Failure.self) { try Aria2GlobalOptions(.object([("max-concurrent-downloads", .string("1000"))])) }
    }
}

/// JSON-RPC envelopes as aria2 reads and writes them.
@Suite struct Aria2CallTests {
    @Test func theTokenIsTheFirstParameterAndIsTakenOff() throws {
        var call = try Aria2Call(
            .object([
                ("id", .string("q")), ("jsonrpc", .string("2.0")), ("method", .string("aria2.tellStatus")),
                ("params", .array([.string("token:s3cret"), .string("0000000000000001")])),
            ]))
        #expect(call.takeToken() == "s3cret")
        #expect(call.params == [.string("0000000000000001")])
        #expect(call.takeToken() == nil)
    }

    @Test func bodiesThatAreNotRequests() {
        func failure(_ text: String) -> Int? {
            do {
                _ = try Aria2Body.parse(Array(text.utf8))
                return nil
            } catch {
                return error.code
            }
        }
        #expect(failure("{") == -32700)
        #expect(failure(#"{"method":"a","method":"b"}"#) == -32700)
        #expect(failure("42") == -32600)
        #expect(failure(#"{"method":"a"}"#) == nil)
        #expect(failure(#"[{"method":"a"},{"method":"b"}]"#) == nil)
        #expect(throws: Aria2Failure.invalidRequest) { try Aria2Call(.object([("params", .array([]))])) }
        #expect(throws: Aria2Failure.invalidRequest) { try Aria2Call(.object([("method", .string("m")), ("params", .string("x"))])) }
    }

    @Test func answersEchoTheID() {
        #expect(Aria2Response.result(.string("OK"), id: .string("7")).text == #"{"id":"7","jsonrpc":"2.0","result":"OK"}"#)
        #expect(
            Aria2Response.error(.unauthorized, id: .integer(3)).text
                == #"{"id":3,"jsonrpc":"2.0","error":{"code":1,"message":"Unauthorized"}}"#)
    }
}

/// A job as aria2 shows it: every field a string, aria2's status words, a key filter.
@Suite struct Aria2DownloadTests {
    func job(_ state: JobState) -> JobSnapshot {
        var job = JobSnapshot(
            id: "0000000000001", url: "https://user:pw@example.com/a.iso", state: state, connections: 4, priority: 0, createdAt: Date())
        job.bytesTotal = 3 << 20
        job.bytesDone = 1 << 20
        job.filename = "a.iso"
        return job
    }

    @Test func aJobInASubDirectoryShowsItAsItsDir() {
        var job = job(.running)
        job.directory = "music/live"
        let shown = Aria2Download(job: job).status(documents: "/d")
        #expect(shown["dir"] == .string("/d/music/live"))
        func path(_ files: JSONValue?) -> JSONValue? {
            guard case .array(let list)? = files else { return nil }
            return list.first?["path"]
        }
        #expect(path(shown["files"]) == .string("/d/music/live/a.iso"))
        job.state = .completed
        job.path = "music/live/a (1).iso"
        #expect(path(Aria2Download(job: job).files(documents: "/d")) == .string("/d/music/live/a (1).iso"))
    }

    @Test func everyFieldIsAStringAndTheURLKeepsNoPassword() throws {
        let shown = Aria2Download(job: job(.running), written: [0..<(1 << 20)]).status(documents: "/d")
        guard case .object(let members) = shown else { throw Aria2Failure("not an object") }
        for (key, value) in members where key != "files" {
            #expect(value.stringValue != nil, "\(key) is \(value.text)")
        }
        #expect(shown["gid"] == .string("0000000000000001"))
        #expect(shown["status"] == .string("active"))
        #expect(shown["bitfield"] == .string("80"))
        #expect(shown["dir"] == .string("/d"))
        #expect(shown.text.contains("user:***@example.com") && !shown.text.contains("pw"))
        #expect(shown["errorCode"] == nil)
    }

    @Test func statesInAria2sWords() {
        let words = JobState.allCases.map { Aria2Download(job: job($0)).status }
        #expect(words == ["waiting", "active", "paused", "complete", "error"])
        #expect(Aria2Download(job: job(.paused), removed: true).status == "removed")
    }

    @Test func keysFilterTheFields() {
        let shown = Aria2Download(job: job(.failed)).status(documents: "/d", keys: ["gid", "errorCode", "nonsense"])
        #expect(shown.text == #"{"gid":"0000000000000001","errorCode":"1"}"#)
    }
}

/// Which change aria2 tells its WebSocket clients about.
@Suite struct Aria2NotificationsTests {
    func job(_ id: String, _ state: JobState) -> JobSnapshot {
        JobSnapshot(id: id, url: "https://example.com/a", state: state, connections: 1, priority: 0, createdAt: Date())
    }

    @Test func transitionsInAria2sWords() {
        var notifications = Aria2Notifications()
        notifications.seed(job("a", .running))
        notifications.seed(job("old", .completed))
        #expect(notifications.change(job("a", .running)) == nil, "progress is no notification")
        #expect(notifications.change(job("a", .paused)) == "aria2.onDownloadPause")
        #expect(notifications.change(job("a", .queued)) == nil)
        #expect(notifications.change(job("a", .running)) == "aria2.onDownloadStart")
        #expect(notifications.change(job("a", .failed)) == "aria2.onDownloadError")
        #expect(notifications.change(job("b", .paused)) == nil, "a job made paused was never started")
        #expect(notifications.change(job("c", .running)) == "aria2.onDownloadStart")
        #expect(notifications.change(job("c", .completed)) == "aria2.onDownloadComplete")
        #expect(notifications.removed(id: "b") == "aria2.onDownloadStop")
        #expect(notifications.removed(id: "c") == nil, "a finished job's removal stops nothing")
        #expect(notifications.removed(id: "old") == nil)
        #expect(
            Aria2Notifications.message("aria2.onDownloadStart", jobID: "0000000000001").text
                == #"{"jsonrpc":"2.0","method":"aria2.onDownloadStart","params":[{"gid":"0000000000000001"}]}"#)
    }
}

/// aria2's paging and positions, whatever numbers a client sends (issue 35, finding 1:
/// `Int64.min` as an offset and `Int64.max` as a position trapped the service).
@Suite struct Aria2PageTests {
    @Test func offsetsFromTheStartAndBackwardsFromTheEnd() {
        #expect(Aria2Page.indices(offset: 0, num: 2, count: 5) == [0, 1])
        #expect(Aria2Page.indices(offset: 3, num: 10, count: 5) == [3, 4])
        #expect(Aria2Page.indices(offset: 5, num: 1, count: 5) == [])
        #expect(Aria2Page.indices(offset: -1, num: 2, count: 5) == [4, 3])
        #expect(Aria2Page.indices(offset: -5, num: 3, count: 5) == [0])
        #expect(Aria2Page.indices(offset: -6, num: 3, count: 5) == [])
        #expect(Aria2Page.indices(offset: 0, num: 0, count: 5) == [])
    }

    @Test func theExtremesOfEveryIntegerSelectNothingAndNeverTrap() {
        for offset in [Int.min, Int.min + 1, -1_000_000_000, 1_000_000_000, Int.max] {
            for num in [0, 1, Int.max] {
                let page = Aria2Page.indices(offset: offset, num: num, count: 3)
                #expect(page.allSatisfy { (0..<3).contains($0) })
            }
        }
        #expect(Aria2Page.indices(offset: 1, num: Int.max, count: 3) == [1, 2])
        #expect(Aria2Page.indices(offset: -1, num: Int.max, count: 3) == [2, 1, 0])
    }

    @Test func aPositionIsClampedWithoutOverflow() {
        #expect(Aria2Page.target(how: "POS_END", position: Int.max, current: 0, others: 4) == 4)
        #expect(Aria2Page.target(how: "POS_END", position: Int.min, current: 0, others: 4) == 0)
        #expect(Aria2Page.target(how: "POS_CUR", position: Int.max, current: 3, others: 4) == 4)
        #expect(Aria2Page.target(how: "POS_CUR", position: -1, current: 3, others: 4) == 2)
        #expect(Aria2Page.target(how: "POS_SET", position: 2, current: 0, others: 4) == 2)
        #expect(Aria2Page.target(how: "POS_NEAR", position: 0, current: 0, others: 4) == nil)
    }

    @Test func anIntegerParameterOutsideItsRangeIsAnErrorNotANumber() throws {
        let call = Aria2Call(
            method: "aria2.tellWaiting",
            params: [.integer(.min), .string("-9223372036854775808"), .integer(.max), .string("12"), .string("99999999999999999999")])
        for index in [0, 1, 2, 4] {
            #expect(throws: Aria2Failure.self) { try call.integer(at: index, "offset") }
        }
        #expect(try call.integer(at: 3, "num") == 12)
    }
}
