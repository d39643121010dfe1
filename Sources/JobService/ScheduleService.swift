import Foundation
import Logging
public import ServiceLifecycle
import SluiceCore

/// Keeps the schedule in effect (CONTRACT.md §7, "State, not edges"). Each tick evaluates it
/// at the wall clock's time: at least once a second and at the instant of the next change it
/// knows of, so a boundary applies within a second and a step of the wall clock (forward or
/// back) at the next tick; nothing depends on having seen the previous one. Beside it, the
/// stored schedule is read again every `reload`: what another node of a cluster stored.
public struct ScheduleService: Service, CustomStringConvertible {
    public var description: String { "ScheduleService" }
    let node: JobScheduler
    let clock: ElapsedClock
    var tick: Duration = .seconds(1)
    var reload: Duration = .seconds(5)

    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        let now = clock.now()
                        let next = await ScheduleCommand.evaluate(at: now, on: node)
                        var wait = tick
                        // Just past the change: a second boundary at `next` evaluates to the new state.
                        if let next { wait = min(wait, .seconds(max(0.001, next.timeIntervalSince(now) + 0.001))) }
                        // Real time, whatever clock the rules read: a tick must not move a test's
                        // virtual clock (which moves when something waits on it).
                        try? await Task.sleep(for: wait)
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: reload)
                        await ScheduleCommand.reloadStored(on: node)
                        await QuotaCommand.exchangeCounts(on: node)
                    }
                }
            }
        }
    }
}
