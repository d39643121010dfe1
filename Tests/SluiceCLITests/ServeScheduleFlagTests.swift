import Foundation
import SluiceTestSupport
import Testing

/// `serve --schedule FILE` (CONTRACT.md §7): the file's schedule is stored and in effect at
/// start; a file that is not one is refused, naming what is wrong, before anything starts.
@Suite struct ServeScheduleFlagTests {
    @Test func theFilesScheduleIsInEffectAtStartAndABadOneStartsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let good = directory.path + "/good.json"
            try #"{"timeZone":"Europe/Berlin","timetable":"Mon-00:00,1M Sat-00:00,off"}"#.write(
                toFile: good, atomically: true, encoding: .utf8)
            try await ChildProcess.serving(data: directory.path + "/data", ["--schedule", good]) { url in
                let port = Int(url.split(separator: ":").last!.trimmingCharacters(in: .punctuationCharacters))!
                let reply = try await RawHTTPClient.request(port: port, path: "/schedule")
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status == 200)
                #expect(text.contains(#""timetable":"Mon-00:00,1M Sat-00:00,off""#), "\(text)")
            }
            for (content, named) in [
                (#"{"rules":[{"from":"25:00","to":"09:00","run":false}]}"#, "rules[0].from"), ("not json", "not valid JSON"),
                (#"{"timeZone":"Nowhere/Special"}"#, "IANA"),
            ] {
                let bad = directory.path + "/bad.json"
                try content.write(toFile: bad, atomically: true, encoding: .utf8)
                let data = directory.path + "/refused"
                let run = try ChildProcess(arguments: ["serve", "--port", "0", "--data", data, "--schedule", bad])
                let (status, _, stderr) = try await run.finish(timeout: .seconds(10))
                #expect(status != 0, "\(content)")
                #expect(stderr.contains("--schedule") && stderr.contains(named), "\(stderr)")
                #expect(!FileManager.default.fileExists(atPath: data + "/sluice.sqlite"))
            }
            let missing = try ChildProcess(arguments: [
                "serve", "--port", "0", "--data", directory.path + "/refused", "--schedule", "/nonexistent.json",
            ])
            #expect(try await missing.finish(timeout: .seconds(10)).stderr.contains("cannot read"))
        }
    }
}
