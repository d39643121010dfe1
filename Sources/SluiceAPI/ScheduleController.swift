import Foundation
import Hummingbird
import JobService
import SluiceCore

/// `/schedule` (CONTRACT.md §7): the week's rules, what they set now and when that changes.
/// `PUT` replaces it (admin scope, as every change but a create).
struct ScheduleController {
    let jobs: any JobService

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.get("/schedule") { _, _ in JSONCoding.response(await jobs.scheduleStatus().json) }
        router.put("/schedule") { request, _ in
            let body = try await JSONCoding.decode(JSONValue.self, from: request)
            return JSONCoding.response(try await jobs.replaceSchedule(try Schedule(json: body)).json)
        }
        router.allowOnly([.get, .put], at: "/schedule")
    }
}
