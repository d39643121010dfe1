import Foundation
import SluiceCore
import Testing

@Suite struct TargetPolicyTests {
    @Test(arguments: [
        // Every spelling the system resolver reads as a loopback or metadata address.
        ("127.0.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("[::1]", "::1"), ("::1", "::1"),
        ("[::ffff:169.254.169.254]", "::ffff:169.254.169.254"), ("169.254.169.254", "169.254.169.254"),
        ("[fe80::1%25eth0]", "fe80::1"), ("0", "0.0.0.0"),
    ])
    func literalsParseAsTheResolverReadsThem(host: String, canonical: String) throws {
        let address = try #require(IPAddress(host: host))
        #expect(address.description == canonical)
        #expect(!TargetPolicy.publicOnly.allows(address))
        #expect(TargetPolicy.allowAll.allows(address))
    }

    @Test(arguments: ["example.com", "localhost", "1.2.3.4.5", "::g", "[::1", "", "127.0.0.1 ", "1.2.3.4x"])
    func namesAreNotLiterals(host: String) {
        #expect(IPAddress(host: host) == nil)
    }

    @Test(arguments: [
        ("10.0.0.1", false), ("172.16.0.1", false), ("172.31.255.255", false), ("172.32.0.1", true),
        ("192.168.0.1", false), ("100.64.0.1", false), ("100.128.0.1", true), ("169.254.1.1", false),
        ("224.0.0.1", false), ("255.255.255.255", false), ("240.0.0.1", false), ("0.1.2.3", false),
        ("8.8.8.8", true), ("1.1.1.1", true), ("93.184.216.34", true),
        ("::", false), ("fc00::1", false), ("fd12:3456::1", false), ("fe80::1", false), ("ff02::1", false),
        ("::ffff:10.0.0.1", false), ("::ffff:8.8.8.8", true), ("64:ff9b::a9fe:a9fe", false), ("64:ff9b::808:808", true),
        ("2002:7f00:1::", false), ("2002:808:808::", true), ("2001:db8::1", false), ("2606:4700::1111", true),
        ("::127.0.0.1", false), ("192.88.99.1", false), ("64:ff9b:1::a00:1", false), ("2001:0:4136:e378::1", false),
    ])
    func rangesOfContract6(host: String, isPublic: Bool) throws {
        let address = try #require(IPAddress(host: host))
        #expect(address.isGlobal == isPublic, "\(host)")
    }

    @Test func exceptionsAllowOneAddressOnly() throws {
        let mirror = try #require(IPAddress(host: "10.0.0.5"))
        let policy = TargetPolicy(allowsPrivateNetworks: false, exceptions: [mirror])
        #expect(policy.allows(mirror))
        #expect(!policy.allows(try #require(IPAddress(host: "10.0.0.6"))))
    }

    @Test func loopbackNames() throws {
        #expect(try #require(IPAddress(host: "127.9.9.9")).isLoopback)
        #expect(try #require(IPAddress(host: "::ffff:127.0.0.1")).isLoopback)
        #expect(!(try #require(IPAddress(host: "128.0.0.1")).isLoopback))
    }

    /// Loopback by definition (RFC 6761), in any case and with a trailing dot: refused where
    /// loopback is, without a lookup; other names are left to their resolution.
    @Test func loopbackNamesAreRefusedWhereLoopbackIs() {
        for name in ["localhost", "LocalHost.", "api.localhost", "a.b.LOCALHOST"] {
            #expect(TargetPolicy.publicOnly.refusesLoopbackName(name), "\(name)")
            #expect(!TargetPolicy.allowAll.refusesLoopbackName(name), "\(name)")
        }
        for name in ["example.com", "localhost.example.com", "mylocalhost", "127.0.0.1"] {
            #expect(!TargetPolicy.publicOnly.refusesLoopbackName(name), "\(name)")
        }
    }
}

@Suite struct JSONValueTests {
    @Test func keepsKeyOrderAndEscapes() {
        let value = JSONValue.object([
            ("z", .string("a\"b\\c\n\u{1}/é")), ("a", .integer(-3)), ("n", .null), ("d", .number(104_857_600)),
            ("f", .number(0.0488)), ("x", .number(.nan)), ("l", .array([.bool(true), .bool(false)])),
        ])
        #expect(value.text == #"{"z":"a\"b\\c\n\u0001/é","a":-3,"n":null,"d":104857600,"f":0.0488,"x":null,"l":[true,false]}"#)
    }

    @Test func datesAreISO8601InUTC() {
        #expect(JSONValue(Date(timeIntervalSince1970: 1_795_341_600.9)) == .string("2026-11-22T10:00:00Z"))
        #expect(JSONValue(Date(timeIntervalSince1970: 0)) == .string("1970-01-01T00:00:00Z"))
        #expect(JSONValue(nil as Date?) == .null)
    }
}

@Suite struct SpaceReservationTests {
    let disk = SpaceReservation.FileSystem(capacity: 128 << 20, available: 100 << 20)

    @Test func reservesOnlyWhatFitsAboveTheFloor() {
        // Default floor: 5 % of 128 MiB = 6.4 MiB.
        #expect(SpaceReservation.verdict(length: 90 << 20, allocated: 0, on: disk, floor: nil) == .reserve)
        guard case .noSpace = SpaceReservation.verdict(length: 96 << 20, allocated: 0, on: disk, floor: nil) else {
            Issue.record("96 MiB leaves less than the floor")
            return
        }
        // What the file already holds is not needed again.
        #expect(SpaceReservation.verdict(length: 120 << 20, allocated: 40 << 20, on: disk, floor: nil) == .reserve)
        #expect(SpaceReservation.verdict(length: 100 << 20, allocated: 0, on: disk, floor: 0) == .reserve)
        guard case .noSpace = SpaceReservation.verdict(length: 1, allocated: 0, on: disk, floor: 200 << 20) else {
            Issue.record("a floor above the free space leaves nothing")
            return
        }
        #expect(SpaceReservation.defaultFloor(capacity: 1 << 40) == 512 << 20)
    }

    @Test(arguments: [Int64(512) << 20, Int64(5) << 40, Int64(1) << 62, Int64.max])
    func moreThanTheFileSystemIsTooLarge(length: Int64) {
        guard case .tooLarge = SpaceReservation.verdict(length: length, allocated: 0, on: disk, floor: nil) else {
            Issue.record("\(length) bytes on a 128 MiB file system")
            return
        }
    }

    @Test func blockCountsNeverOverflow() {
        let huge = SpaceReservation.FileSystem(blockSize: 1 << 20, totalBlocks: .max, availableBlocks: UInt64(1) << 50)
        #expect(huge.capacity == .max && huge.available == .max)
        #expect(SpaceReservation.verdict(length: .max, allocated: .max, on: huge, floor: nil) == .reserve)
    }
}

@Suite struct RetryMachineTests {
    let policy = RetryPolicy(base: 1, maximum: 60, maximumFailures: 5)
    let error = SluiceError(.network, "reset")

    @Test func backsOffDoublingAndGivesUpAfterFiveFailuresWithoutProgress() {
        var machine = RetryMachine(policy: policy)
        let waits = (1...4).map { _ in machine.handle(.transient(error, retryAfter: nil), jitter: 1) }
        #expect(waits == [.retry(after: .seconds(1)), .retry(after: .seconds(2)), .retry(after: .seconds(4)), .retry(after: .seconds(8))])
        #expect(machine.handle(.transient(error, retryAfter: nil), jitter: 1) == .fail(error))
    }

    @Test func progressForgivesButAStallIsNotForgiven() {
        var machine = RetryMachine(policy: policy)
        for _ in 0..<20 {
            #expect(machine.handle(.transient(error, retryAfter: nil), jitter: 0) != .fail(error))
            #expect(machine.handle(.progressed, jitter: 0) == .proceed)
        }
        let stall = SluiceError(.network, "the connection stalled")
        let actions = (0..<5).map { _ in machine.handle(.stalled(stall), jitter: 0) }
        #expect(actions.last == .fail(stall))
    }

    @Test func retryAfterIsHonouredUpToTenMinutes() {
        var machine = RetryMachine(policy: policy)
        #expect(machine.handle(.transient(error, retryAfter: 30), jitter: 0) == .retry(after: .seconds(30)))
        #expect(machine.handle(.transient(error, retryAfter: 3600), jitter: 0) == .retry(after: .seconds(600)))
    }

    @Test func restartsAreBoundedAndFinalErrorsAndCancellationEndAtOnce() {
        var machine = RetryMachine(policy: policy)
        for _ in 0..<5 { #expect(machine.handle(.remoteChanged("etag"), jitter: 0) == .restartFromZero(reason: "etag")) }
        guard case .fail(let failure) = machine.handle(.remoteChanged("etag"), jitter: 0) else {
            Issue.record("a sixth restart")
            return
        }
        #expect(failure.code == .remoteChanged)
        let notFound = SluiceError(.httpStatus, "404")
        var fresh = RetryMachine(policy: policy)
        #expect(fresh.handle(.final(notFound), jitter: 0) == .fail(notFound))
        var cancelled = RetryMachine(policy: policy)
        #expect(cancelled.handle(.cancelled, jitter: 0) == .stop)
    }
}

@Suite struct StallWatchTests {
    @Test func aTrickleOfAByteEvery29SecondsIsStalled() {
        var watch = StallWatch()
        #expect(watch.received(1, at: .seconds(29)) == nil)
        let reason = watch.received(1, at: .seconds(58))
        #expect(reason?.contains("under 1024 bytes/s") == true, "\(reason ?? "nil")")
    }

    @Test func aSteadyFlowIsNotAndAZeroFloorNeverIs() {
        var steady = StallWatch()
        for second in 1...120 { #expect(steady.received(2048, at: .seconds(second)) == nil) }
        var off = StallWatch(floor: 0)
        #expect(off.received(1, at: .seconds(3600)) == nil)
    }
}

@Suite struct ResponseVerdictEventTests {
    @Test func everyVerdictIsAnEventOrABodyToWrite() {
        #expect(RetryMachine.event(for: .accept, status: 206) == nil)
        #expect(RetryMachine.event(for: .restart("etag"), status: 200) == .remoteChanged("etag"))
        #expect(
            RetryMachine.event(for: .transient(retryAfter: 3), status: 503)
                == .transient(SluiceError(.httpStatus, "the server answered HTTP 503"), retryAfter: 3))
        #expect(
            RetryMachine.event(for: .fatal(status: 404), status: 404) == .final(SluiceError(.httpStatus, "the server answered HTTP 404")))
        #expect(
            RetryMachine.event(for: .invalid("multipart"), status: 206)
                == .transient(SluiceError(.invalidResponse, "multipart"), retryAfter: nil))
    }

    @Test func aVerifiedFileIsPlacedOnlyWithTheRightDigest() {
        let md5 = "b1946ac92492d2347c6235b4d2611184"
        #expect(RetryMachine.verified(digest: md5, expected: nil) == .place)
        #expect(RetryMachine.verified(digest: md5, expected: Checksum(.md5, hex: md5.uppercased())) == .place)
        guard case .fail(let error) = RetryMachine.verified(digest: md5, expected: Checksum(.md5, hex: String(repeating: "0", count: 32)))
        else {
            Issue.record("a wrong digest was placed")
            return
        }
        #expect(error.code == .checksumMismatch && error.message.hasPrefix("MD5 is \(md5), expected 000"))
    }
}
