import Testing

@testable import SluiceCore

@Suite struct RangeHeaderTests {
    // RFC 9110 §14.1.2's examples against its 10000-byte representation.
    @Test(arguments: [
        ("bytes=0-499", [ByteRange(first: 0, last: 499)]),
        ("bytes=500-999", [ByteRange(first: 500, last: 999)]),
        ("bytes=-500", [ByteRange(first: 9500, last: 9999)]),
        ("bytes=9500-", [ByteRange(first: 9500, last: 9999)]),
        ("bytes=0-0,-1", [ByteRange(first: 0, last: 0), ByteRange(first: 9999, last: 9999)]),
        (
            "bytes= 0-999, 4500-5499, -1000",
            [ByteRange(first: 0, last: 999), ByteRange(first: 4500, last: 5499), ByteRange(first: 9000, last: 9999)]
        ),
        ("bytes=500-600,601-999", [ByteRange(first: 500, last: 999)]),
        ("bytes=500-700,601-999", [ByteRange(first: 500, last: 999)]),
        ("BYTES=0-1", [ByteRange(first: 0, last: 1)]),
        ("bytes=,0-1,,", [ByteRange(first: 0, last: 1)]),
        ("bytes=9000-99999999999999999999", [ByteRange(first: 9000, last: 9999)]),
        ("bytes=-99999999999999999999", [ByteRange(first: 0, last: 9999)]),
        ("bytes=7000-7999,0-999", [ByteRange(first: 7000, last: 7999), ByteRange(first: 0, last: 999)]),
    ])
    func satisfiable(header: String, expected: [ByteRange]) throws {
        let specs = try #require(RangeHeader.parse(header))
        #expect(RangeResolution.resolve(specs, length: 10000) == .partial(expected))
    }

    @Test(arguments: ["bytes=5-3", "bytes=x-y", "items=0-1", "bytes", "bytes=", "bytes=1", "bytes=--1", "bytes=0-1-2", "bytes=+1-2"])
    func invalidHeadersAreIgnored(header: String) {
        #expect(RangeHeader.parse(header) == nil)
    }

    @Test(arguments: ["bytes=10000-", "bytes=-0", "bytes=10000-20000,99999-"])
    func unsatisfiable(header: String) throws {
        let specs = try #require(RangeHeader.parse(header))
        #expect(RangeResolution.resolve(specs, length: 10000) == .unsatisfiable)
    }

    @Test func zeroLengthRepresentationIsAlwaysWhole() throws {
        #expect(RangeResolution.resolve(try #require(RangeHeader.parse("bytes=-5")), length: 0) == .whole)
        #expect(RangeResolution.resolve(try #require(RangeHeader.parse("bytes=0-")), length: 0) == .whole)
    }

    @Test func manyOverlappingRangesAreRefused() throws {
        let header = "bytes=" + Array(repeating: "0-0", count: 50).joined(separator: ",")
        #expect(RangeResolution.resolve(try #require(RangeHeader.parse(header)), length: 100) == .whole)
        let three = try #require(RangeHeader.parse("bytes=0-10,5-20,100-200"))
        #expect(RangeResolution.resolve(three, length: 1000) == .whole)
    }

    @Test func tooManyPartsAreRefused() throws {
        let header = "bytes=" + (0..<40).map { "\($0 * 10)-\($0 * 10 + 1)" }.joined(separator: ",")
        #expect(RangeResolution.resolve(try #require(RangeHeader.parse(header)), length: 1000) == .whole)
    }
}

@Suite struct ContentRangeTests {
    @Test func parsesWhatRFCExamplesSend() {
        #expect(ContentRange(parsing: "bytes 42-1233/1234") == .range(ByteRange(first: 42, last: 1233), completeLength: 1234))
        #expect(ContentRange(parsing: "bytes 42-1233/*") == .range(ByteRange(first: 42, last: 1233), completeLength: nil))
        #expect(ContentRange(parsing: "bytes */1234") == .unsatisfied(completeLength: 1234))
    }

    @Test(arguments: [
        "bytes 5-3/10", "bytes 0-10/10", "items 0-1/2", "bytes 0-1", "bytes a-b/c", "bytes 0-99999999999999999999/100000000000000000000",
    ])
    func rejectsWhatMustNotBeRecombined(value: String) {
        #expect(ContentRange(parsing: value) == nil)
    }

    @Test func formats() {
        #expect(ContentRange.range(ByteRange(first: 0, last: 99), completeLength: 100).headerValue == "bytes 0-99/100")
        #expect(ContentRange.unsatisfied(completeLength: 100).headerValue == "bytes */100")
    }
}
