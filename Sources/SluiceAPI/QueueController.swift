import JobService
import Hummingbird
import SluiceCore

/// `/queue`: the queue's settings and counts, read and changed while it runs.
struct QueueController {
    let jobs: any JobService

    func addRoutes(to router: Router<SluiceRequestContext>) {
        router.get("/queue") { _, _ in JSONCoding.response(await jobs.queue().json) }
        router.patch("/queue") { request, _ in
            let patch = try await JSONCoding.decode(QueueSettingsPatch.self, from: request)
            return JSONCoding.response(try await jobs.updateQueue(patch).json)
        }
        router.allowOnly([.get, .patch], at: "/queue")
        router.get("/nodes") { _, _ in
            JSONCoding.response(.object([("nodes", .array(try await jobs.nodes().map(\.json)))]))
        }
        router.allowOnly([.get], at: "/nodes")
    }
}
