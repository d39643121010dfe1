import Testing

@testable import SluiceCore

@Suite struct EntityTagTests {
    @Test func parsesStrongAndWeak() {
        #expect(EntityTag(parsing: "\"xyzzy\"") == EntityTag("xyzzy"))
        #expect(EntityTag(parsing: "W/\"xyzzy\"") == EntityTag("xyzzy", weak: true))
        #expect(EntityTag(parsing: "xyzzy") == nil)
        #expect(EntityTag(parsing: "\"a b\"") == nil)
        #expect(EntityTag(parsing: "\"") == nil)
    }

    // RFC 9110 §8.8.3.2's comparison table.
    @Test func comparisons() {
        let weak1 = EntityTag("1", weak: true)
        let weak2 = EntityTag("2", weak: true)
        let strong1 = EntityTag("1")
        #expect(!weak1.strongMatches(weak1) && weak1.weakMatches(weak1))
        #expect(!weak1.strongMatches(weak2) && !weak1.weakMatches(weak2))
        #expect(!weak1.strongMatches(strong1) && weak1.weakMatches(strong1))
        #expect(strong1.strongMatches(strong1) && strong1.weakMatches(strong1))
    }

    @Test func listsWithEmptyElementsAndCommasInTags() {
        #expect(EntityTagCondition(parsing: "\"a\", ,W/\"b,c\"") == .tags([EntityTag("a"), EntityTag("b,c", weak: true)]))
        #expect(EntityTagCondition(parsing: "*") == .any)
        #expect(EntityTagCondition(parsing: "\"a\", garbage") == nil)
    }
}

@Suite struct HTTPDateTests {
    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(1_767_225_600) == "Thu, 01 Jan 2026 00:00:00 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func parsesAllThreeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 8:49:37 GMT") == nil)
    }

    @Test func roundTripsAcrossCenturies() {
        for seconds: Int64 in [0, 86_399, 86_400, 1_000_000_000, 4_102_444_800, 253_402_300_799] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
    }
}

@Suite struct PreconditionTests {
    let validators = Validators(etag: EntityTag("v1"), lastModified: 1_000_000, lastModifiedIsStrong: true)
    let at = HTTPDate.format(1_000_000)
    let before = HTTPDate.format(999_999)
    let after = HTTPDate.format(1_000_001)

    func evaluate(_ headers: ConditionalHeaders, getOrHead: Bool = true) -> PreconditionOutcome {
        Preconditions.evaluate(headers, validators: validators, isGetOrHead: getOrHead)
    }

    @Test func ifMatchUsesStrongComparison() {
        #expect(evaluate(.init(ifMatch: "\"v1\"")) == .proceed(honourRange: true))
        #expect(evaluate(.init(ifMatch: "W/\"v1\"")) == .preconditionFailed)
        #expect(evaluate(.init(ifMatch: "\"v2\"")) == .preconditionFailed)
        #expect(evaluate(.init(ifMatch: "*")) == .proceed(honourRange: true))
    }

    @Test func ifUnmodifiedSinceOnlyWithoutIfMatch() {
        #expect(evaluate(.init(ifUnmodifiedSince: before)) == .preconditionFailed)
        #expect(evaluate(.init(ifUnmodifiedSince: at)) == .proceed(honourRange: true))
        #expect(evaluate(.init(ifMatch: "\"v1\"", ifUnmodifiedSince: before)) == .proceed(honourRange: true))
    }

    @Test func ifNoneMatchUsesWeakComparisonAndWinsOverIfModifiedSince() {
        #expect(evaluate(.init(ifNoneMatch: "W/\"v1\"")) == .notModified)
        #expect(evaluate(.init(ifNoneMatch: "\"v1\"", ifRange: "\"v1\"")) == .notModified)
        #expect(evaluate(.init(ifNoneMatch: "\"v1\""), getOrHead: false) == .preconditionFailed)
        #expect(evaluate(.init(ifNoneMatch: "\"v2\"", ifModifiedSince: after)) == .proceed(honourRange: true))
        #expect(evaluate(.init(ifModifiedSince: at)) == .notModified)
        #expect(evaluate(.init(ifModifiedSince: before)) == .proceed(honourRange: true))
        #expect(evaluate(.init(ifModifiedSince: "garbage")) == .proceed(honourRange: true))
    }

    @Test func ifMatchFailureComesBeforeNotModified() {
        #expect(evaluate(.init(ifMatch: "\"v2\"", ifNoneMatch: "\"v1\"")) == .preconditionFailed)
    }

    @Test func ifRangeIsStrongAndExact() {
        #expect(evaluate(.init(ifRange: "\"v1\"")) == .proceed(honourRange: true))
        #expect(evaluate(.init(ifRange: "W/\"v1\"")) == .proceed(honourRange: false))
        #expect(evaluate(.init(ifRange: "\"v2\"")) == .proceed(honourRange: false))
        #expect(evaluate(.init(ifRange: at)) == .proceed(honourRange: true))
        #expect(evaluate(.init(ifRange: before)) == .proceed(honourRange: false))
        #expect(evaluate(.init(ifRange: after)) == .proceed(honourRange: false))
        var weakDate = validators
        weakDate.lastModifiedIsStrong = false
        #expect(Preconditions.ifRangeHolds(at, validators: weakDate) == false)
    }

    @Test func ifRangeValueSentByClients() {
        #expect(validators.ifRangeValue == "\"v1\"")
        #expect(Validators(etag: EntityTag("x", weak: true)).ifRangeValue == nil)
        #expect(Validators(etag: EntityTag("x", weak: true), lastModified: 5, lastModifiedIsStrong: false).ifRangeValue == nil)
        #expect(Validators(etag: EntityTag("x", weak: true), lastModified: 784_111_777).ifRangeValue == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(Validators(lastModified: 784_111_777).ifRangeValue == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
