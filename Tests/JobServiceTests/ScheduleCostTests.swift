import Foundation
import Testing

@testable import JobService
import SluiceCore

/// bench/RESULTS.md's "cost of evaluating the schedule": run with SLUICE_BENCH=1 (it prints,
/// and checks that what it timed did the work).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["SLUICE_BENCH"] == "1")) struct ScheduleCostTests {
    @Test func evaluatingTwentyRules() throws {
        let rules = (0..<20).map { index in
            ScheduleRule(
                days: Set(Weekday.allCases.filter { $0.rawValue.count + index % 3 > 3 }), from: (index * 67) % 1440,
                to: (index * 131 + 90) % 1440, limitRate: index % 2 == 0 ? .set(Int64(index + 1) << 20) : nil, maxActive: index % 4 + 1)
        }
        let evaluator = ScheduleEvaluator(Schedule(timeZone: "Europe/Berlin", rules: rules))
        let start: Int64 = 1_796_212_800
        let count = 20_000
        let clock = ContinuousClock()
        var rates = Set<Int64?>()
        var changes = 0
        let stateTime = clock.measure {
            for step in 0..<count { rates.insert(evaluator.state(at: start + Int64(step) * 31).limitRate?.value ?? nil) }
        }
        let nextTime = clock.measure {
            for step in 0..<(count / 20) { if evaluator.nextChange(after: start + Int64(step) * 613) != nil { changes += 1 } }
        }
        var timetable = QueueSchedule(Schedule(timeZone: "Europe/Berlin", rules: rules))
        let tickTime = clock.measure {
            for step in 0..<count { timetable.evaluate(at: Date(timeIntervalSince1970: TimeInterval(start + Int64(step)))) }
        }
        func micros(_ duration: Duration, _ runs: Int) -> String { String(format: "%.1f", duration / .microseconds(1) / Double(runs)) }
        print(
            "schedule of 20 rules: state(at:) \(micros(stateTime, count)) µs, nextChange \(micros(nextTime, count / 20)) µs, a tick (QueueSchedule.evaluate, one a second) \(micros(tickTime, count)) µs"
        )
        // What was timed did the work: the rules set several rates over the week, and change.
        #expect(rates.count > 1, "\(rates)")
        #expect(changes == count / 20)
    }
}
