import Foundation
import SluiceCore
import SluiceTestSupport
import Testing

/// `sluice schedule` and `sluice add --start-at` against a real service (CONTRACT.md §7).
@Suite struct ScheduleCommandTests {
    @Test func theScheduleIsSetShownAndClearedAndAHeldJobSaysWhatHoldsIt() async throws {
        try await ClientCommandTests.withService { url in
            let set = try await ClientCommandTests.sluice(
                ["schedule", "--timetable", "Mon-00:00,1M Sat-00:00,off", "--time-zone", "Europe/Berlin"], url)
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout.contains("time zone: Europe/Berlin"))
            #expect(set.stdout.contains("timetable: Mon-00:00,1M Sat-00:00,off"))
            #expect(set.stdout.contains("next change: "))
            let json = try await ClientCommandTests.sluice(["schedule", "--json"], url)
            let schedule = try JSONDecoder().decode(JSONValue.self, from: Data(json.stdout.utf8))
            #expect(schedule["timetable"]?.stringValue == "Mon-00:00,1M Sat-00:00,off")
            let bad = try await ClientCommandTests.sluice(["schedule", "--timetable", "Mon-25:00,1M"], url)
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("timetable"), "\(bad.stderr)")
            let cleared = try await ClientCommandTests.sluice(["schedule", "--clear"], url)
            #expect(cleared.stdout.contains("no rules"), "\(cleared.stdout)")
            // A job that starts in a year waits, and `ls` says for what.
            let added = try await ClientCommandTests.sluice(
                ["add", "\(url)/testdata/1K", "--start-at", "2099-01-01T00:00:00Z"], url)
            #expect(added.status == 0, "\(added.stderr)")
            let table = try await ClientCommandTests.sluice(["ls"], url)
            #expect(table.stdout.contains("waiting:startAt"), "\(table.stdout)")
            let refused = try await ClientCommandTests.sluice(["add", "\(url)/testdata/1K", "--start-at", "soon"], url)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--start-at"))
        }
    }
}
