import Foundation
import Testing

@testable import SluiceCore

@Suite struct FileNameTests {
    @Test(arguments: [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("a/b\\c", "a_b_c"),
        ("  spaced.txt  ", "spaced.txt"),
        (".hidden", "hidden"),
        ("tab\there", "tab_here"),
        ("caf\u{E9}.txt", "caf\u{E9}.txt"),
        // Invisible format characters and C1 controls go: what is shown is what is saved.
        ("evil\u{202E}txt.exe", "eviltxt.exe"),
        ("a\u{200B}b\u{FEFF}c\u{2066}.pdf", "abc.pdf"),
        ("c1\u{85}\u{9B}x.bin", "c1x.bin"),
        // Joiners that emoji and several scripts need stay.
        ("\u{1F468}\u{200D}\u{1F469}.png", "\u{1F468}\u{200D}\u{1F469}.png"),
    ])
    func sanitizes(raw: String, expected: String) {
        #expect(FileNameSanitizer.sanitize(raw) == expected)
    }

    @Test(arguments: ["", ".", "..", "...", "/", "   "])
    func nothingUsableLeft(raw: String) {
        #expect(FileNameSanitizer.sanitize(raw) == nil)
    }

    @Test func longNamesKeepTheirExtension() throws {
        let name = try #require(FileNameSanitizer.sanitize(String(repeating: "x", count: 500) + ".iso"))
        #expect(name.utf8.count <= FileNameSanitizer.maximumLength)
        #expect(name.hasSuffix(".iso"))
    }

    @Test(arguments: ["a/b", "a\\b", "a\u{0}b", ".", "..", "", "a\nb", "evil\u{202E}txt.exe", "x\u{9B}y", "bom\u{FEFF}"])
    func userNamesAreRefused(name: String) {
        #expect(!FileNameSanitizer.isValid(name))
    }

    @Test func contentDispositionPrefersFilenameStar() {
        #expect(ContentDisposition.fileName("attachment; filename=\"plain.txt\"; filename*=UTF-8''na%C3%AFve.txt") == "naïve.txt")
        #expect(ContentDisposition.fileName("attachment; filename=\"a;b \\\"q\\\".txt\"") == "a;b \"q\".txt")
        #expect(ContentDisposition.fileName("attachment; filename=simple.bin") == "simple.bin")
        #expect(ContentDisposition.fileName("attachment; filename*=iso-8859-1'en'%E9t%E9.txt") == "été.txt")
        #expect(ContentDisposition.fileName("inline") == nil)
    }

    @Test func downloadNameFallsBackFromHeaderToURLToDefault() {
        #expect(FileNameSanitizer.downloadName(contentDisposition: "attachment; filename=\"../x.iso\"", urlPath: "/a/b.bin") == "_x.iso")
        #expect(FileNameSanitizer.downloadName(contentDisposition: nil, urlPath: "/dir/my%20file.tar.gz") == "my file.tar.gz")
        #expect(FileNameSanitizer.downloadName(contentDisposition: nil, urlPath: "/") == "download")
        #expect(FileNameSanitizer.downloadName(contentDisposition: nil, urlPath: "/%2e%2e") == "download")
    }

    /// A name at the file-system limit still gets its number: the stem gives way.
    @Test(arguments: [255, 254, 250, 200])
    func numberedNamesFitIn255Bytes(length: Int) {
        let name = String(repeating: "n", count: length - 4) + ".iso"
        for number in [1, 9, 10, 9999] {
            let numbered = FileNameSanitizer.numbered(name, number)
            #expect(numbered.utf8.count <= 255, "\(numbered.utf8.count)")
            #expect(numbered.hasSuffix(" (\(number)).iso"))
            #expect(FileNameSanitizer.isValid(numbered))
        }
        // Multi-byte characters are never split.
        let wide = String(repeating: "\u{00E9}", count: 125) + ".txt"
        #expect(wide.utf8.count == 254)
        let numbered = FileNameSanitizer.numbered(wide, 12)
        #expect(numbered.utf8.count <= 255)
        #expect(numbered.hasSuffix(" (12).txt"))
        #expect(numbered.unicodeScalars.allSatisfy { $0 == "\u{00E9}" || " ().0123456789txt".unicodeScalars.contains($0) })
        // An extension too long to keep is dropped rather than the limit broken.
        let longExtension = "a." + String(repeating: "e", count: 252)
        #expect(FileNameSanitizer.numbered(longExtension, 1).utf8.count <= 255)
    }

    @Test func numberedNamesGoBeforeTheExtension() {
        #expect(FileNameSanitizer.numbered("file.iso", 1) == "file (1).iso")
        #expect(FileNameSanitizer.numbered("file.tar.gz", 2) == "file (2).tar.gz")
        #expect(FileNameSanitizer.numbered("README", 3) == "README (3)")
        #expect(FileNameSanitizer.numbered(".bashrc", 1) == ".bashrc (1)")
    }
}

@Suite struct RetryAndSpeedTests {
    @Test func backoffDoublesWithJitterUpToTheMaximum() {
        let policy = RetryPolicy()
        #expect(policy.delay(afterFailures: 1, jitter: 0) == 0.5)
        #expect(policy.delay(afterFailures: 1, jitter: 1) == 1)
        #expect(policy.delay(afterFailures: 2, jitter: 1) == 2)
        #expect(policy.delay(afterFailures: 4, jitter: 1) == 8)
        #expect(policy.delay(afterFailures: 10, jitter: 1) == 60)
        #expect(policy.delay(afterFailures: 100, jitter: 0.5) == 45)
    }

    @Test func retryAfterIsAFloor() {
        #expect(RetryPolicy().delay(afterFailures: 1, retryAfter: 7, jitter: 1) == 7)
        #expect(RetryPolicy().delay(afterFailures: 8, retryAfter: 7, jitter: 1) == 60)
    }

    @Test func statuses() {
        #expect(StatusDisposition(status: 206) == .success)
        #expect([408, 429, 500, 503, 599].allSatisfy { StatusDisposition(status: $0) == .transient })
        #expect([400, 401, 403, 404, 410, 416].allSatisfy { StatusDisposition(status: $0) == .fatal })
    }

    @Test func speedOverAMovingWindow() {
        var meter = SpeedMeter(window: 5)
        meter.record(bytes: 0, at: 0)
        #expect(meter.bytesPerSecond == 0)
        meter.record(bytes: 1000, at: 1)
        #expect(meter.bytesPerSecond == 1000)
        for second in 2...10 { meter.record(bytes: Int64(second) * 1000 + Int64(second > 6 ? (second - 6) * 1000 : 0), at: Double(second)) }
        #expect(meter.bytesPerSecond > 1500)
        #expect(meter.eta(remaining: 0) == 0)
        #expect(meter.eta(remaining: nil) == nil)
        meter.record(bytes: 0, at: 11)
        #expect(meter.bytesPerSecond == 0)
    }
}

@Suite struct ResponseCheckTests {
    let validators = Validators(etag: EntityTag("v1"))

    func ranged(_ status: Int, _ headers: [String: String], range: Range<Int64> = 100..<200) -> ResponseCheck.Verdict {
        ResponseCheck.ranged(status: status, header: { headers[$0] }, range: range, total: 1000, validators: validators)
    }

    @Test func acceptsOnlyTheExactRange() {
        #expect(ranged(206, ["Content-Range": "bytes 100-199/1000", "ETag": "\"v1\""]) == .accept)
        #expect(ranged(206, ["Content-Range": "bytes 100-198/1000", "ETag": "\"v1\""]) == .invalid("asked for bytes 100-199, got 100-198"))
        #expect(ranged(206, ["Content-Range": "bytes 0-99/1000", "ETag": "\"v1\""]) != .accept)
        #expect(ranged(206, [:]) == .invalid("206 without a valid Content-Range"))
        #expect(ranged(206, ["Content-Range": "bytes 199-100/1000"]) == .invalid("206 without a valid Content-Range"))
        #expect(ranged(206, ["Content-Range": "bytes 100-199/1000", "Content-Type": "multipart/byteranges; boundary=x"]) != .accept)
    }

    @Test func aWholeFileOrAnotherVersionMeansStartOver() {
        guard case .restart = ranged(200, [:]) else {
            Issue.record("200 must restart")
            return
        }
        guard case .restart = ranged(206, ["Content-Range": "bytes 100-199/2000"]) else {
            Issue.record("length")
            return
        }
        guard case .restart = ranged(206, ["Content-Range": "bytes 100-199/1000", "ETag": "\"v2\""]) else {
            Issue.record("etag")
            return
        }
        guard case .restart = ranged(416, ["Content-Range": "bytes */50"]) else {
            Issue.record("416")
            return
        }
    }

    /// Issue 10: the probe's validators must all come back; a missing or new one is a change.
    @Test func aMissingOrAddedValidatorIsAChange() {
        guard case .restart = ranged(206, ["Content-Range": "bytes 100-199/1000"]) else {
            Issue.record("ETag gone")
            return
        }
        guard case .restart = ranged(206, ["Content-Range": "bytes 100-199/1000", "ETag": "W/\"v1\""]) else {
            Issue.record("strong became weak")
            return
        }
        let dated = Validators(etag: EntityTag("v1"), lastModified: 1_767_225_600)
        let both = ["Content-Range": "bytes 100-199/1000", "ETag": "\"v1\"", "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]
        #expect(ResponseCheck.ranged(status: 206, header: { both[$0] }, range: 100..<200, total: 1000, validators: dated) == .accept)
        var noDate = both
        noDate["Last-Modified"] = nil
        guard case .restart = ResponseCheck.ranged(status: 206, header: { noDate[$0] }, range: 100..<200, total: 1000, validators: dated)
        else {
            Issue.record("date gone")
            return
        }
        // A validator only the later answer has says nothing about the bytes on disk.
        #expect(ResponseCheck.ranged(status: 206, header: { both[$0] }, range: 100..<200, total: 1000, validators: validators) == .accept)
    }

    @Test func continuingAPartialFileReadsTheAnswerToBytesFromItsSize() throws {
        func check(_ status: Int, _ headers: [String: String]) -> Result<ResponseCheck.Continuation, ResponseCheck.ProbeFailure> {
            ResponseCheck.continuation(status: status, header: { headers[$0] }, offset: 300)
        }
        guard case .success(.resume(let probe)) = check(206, ["Content-Range": "bytes 300-999/1000", "ETag": "\"e\""]) else {
            Issue.record("206 from the offset continues")
            return
        }
        #expect(probe.totalBytes == 1000 && probe.validators.ifRangeValue == "\"e\"")
        #expect(check(206, ["Content-Range": "bytes 0-999/1000"]) == .success(.startOver))
        #expect(check(200, ["Content-Length": "1000"]) == .success(.startOver))
        #expect(check(416, ["Content-Range": "bytes */300"]) == .success(.complete))
        #expect(check(416, ["Content-Range": "bytes */200"]) == .success(.startOver))
        #expect(check(503, ["Retry-After": "2"]) == .failure(.transient(retryAfter: 2)))
        #expect(check(404, [:]) == .failure(.fatal(status: 404)))
    }

    @Test func statusesAreSorted() {
        #expect(ranged(503, ["Retry-After": "3"]) == .transient(retryAfter: 3))
        #expect(ranged(429, [:]) == .transient(retryAfter: nil))
        #expect(ranged(404, [:]) == .fatal(status: 404))
    }

    @Test func probeTellsRangesLengthAndValidators() throws {
        let headers = ["Content-Range": "bytes 0-999/1000", "ETag": "\"x\"", "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"]
        let probe = try ResponseCheck.probe(status: 206, header: { headers[$0] }).get()
        #expect(probe.totalBytes == 1000 && probe.acceptsRanges)
        #expect(probe.validators.ifRangeValue == "\"x\"")
        let whole = try ResponseCheck.probe(status: 200, header: { ["Content-Length": "5"][$0] }).get()
        #expect(whole.totalBytes == 5 && !whole.acceptsRanges)
        let unknown = try ResponseCheck.probe(status: 200, header: { _ in nil }).get()
        #expect(unknown.totalBytes == nil)
        #expect(ResponseCheck.probe(status: 416, header: { _ in nil }) == .failure(.emptyRange))
        #expect(
            ResponseCheck.probe(status: 206, header: { ["Content-Range": "bytes 5-9/10"][$0] })
                == .failure(.invalid("206 to bytes=0- without a Content-Range for the whole file")))
    }

    @Test func weakValidatorsAreNeverSentInIfRange() throws {
        let headers = ["Content-Range": "bytes 0-9/10", "ETag": "W/\"x\""]
        let probe = try ResponseCheck.probe(status: 206, header: { headers[$0] }).get()
        #expect(probe.validators.ifRangeValue == nil)
        // RFC 9110 §13.1.5: with a weak ETag, a strong Last-Modified is what If-Range carries.
        let dated = [
            "Content-Range": "bytes 0-9/10", "ETag": "W/\"x\"", "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT",
            "Date": "Thu, 01 Jan 2026 00:00:05 GMT",
        ]
        let withDate = try ResponseCheck.probe(status: 206, header: { dated[$0] }).get()
        #expect(withDate.validators.ifRangeValue == "Thu, 01 Jan 2026 00:00:00 GMT")
        var fresh = dated
        fresh["Date"] = "Thu, 01 Jan 2026 00:00:00 GMT"
        #expect(try ResponseCheck.probe(status: 206, header: { fresh[$0] }).get().validators.ifRangeValue == nil)
    }

    @Test func checkpointsKeepWhetherTheDateIsStrong() throws {
        let weak = Validators(lastModified: 1000, lastModifiedIsStrong: false)
        let decoded = try JSONDecoder().decode(Validators.self, from: JSONEncoder().encode(weak))
        #expect(decoded.ifRangeValue == nil)
        let old = try JSONDecoder().decode(Validators.self, from: Data(#"{"lastModified":1000}"#.utf8))
        #expect(old.ifRangeValue == nil)
    }

    /// `dir` is split at every `/`, as the file system splits it: a part may begin with a
    /// combining mark or an emoji modifier (Swift's characters joined it to the `/` before
    /// it, and the service refused a `dir` its schema admits); a `/` never hides inside a part.
    @Test func aDirIsSplitAtEverySlash() throws {
        try CreateJobRequest.validateDirectory("a/\u{308}b", field: "dir")
        try CreateJobRequest.validateDirectory("music/\u{1F3FB}x", field: "dir")
        #expect("a/\u{308}b/c".pathParts == ["a", "\u{308}b", "c"])
        #expect("/a//b/".pathParts == ["", "a", "", "b", ""])
        for refused in ["a/\u{308}/..", "a//b", "/a", "a/", "a/../b"] {
            #expect(throws: SluiceError.self, "\(refused.unicodeScalars.map(\.value))") {
                try CreateJobRequest.validateDirectory(refused, field: "dir")
            }
        }
    }
}
