import Aria2RPC
import Foundation
import JobService
import SluiceCore

/// aria2's RPC methods on Sluice's jobs: each call is authorized by its `token:SECRET`
/// parameter (the service's token, or a named one whose scope covers the method), then answered from the same job service the REST API uses.
struct Aria2Methods: Sendable {
    let jobs: any JobService
    /// The documents directory's path: aria2's `dir`, the only one a download may name.
    let documents: String
    /// Who a call's `token:SECRET` is; nothing is checked when the service has no token.
    let tokens: TokenRegistry
    let results: Aria2Results
    /// `getSessionInfo`: 40 hexadecimal digits, new at each start, as aria2's.
    let session: String
    /// What `aria2.shutdown` asks to stop the service; nil refuses it (no `--rpc-allow-shutdown`).
    let shutdown: RPCShutdown?

    init(
        jobs: any JobService, documents: String, tokens: TokenRegistry, results: Aria2Results = Aria2Results(),
        shutdown: RPCShutdown? = nil
    ) {
        self.jobs = jobs
        self.documents = documents
        self.tokens = tokens
        self.results = results
        self.shutdown = shutdown
        session = (0..<5).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max)) }.joined()
    }

    /// The version of aria2's RPC this speaks (AriaNg and aria2p read it).
    static let aria2Version = "1.37.0"

    static let methods = [
        "aria2.addUri", "aria2.addTorrent", "aria2.getPeers", "aria2.addMetalink", "aria2.remove", "aria2.pause",
        "aria2.forcePause", "aria2.pauseAll", "aria2.forcePauseAll", "aria2.unpause", "aria2.unpauseAll", "aria2.forceRemove",
        "aria2.changePosition", "aria2.tellStatus", "aria2.getUris", "aria2.getFiles", "aria2.getServers", "aria2.tellActive",
        "aria2.tellWaiting", "aria2.tellStopped", "aria2.getOption", "aria2.changeUri", "aria2.changeOption",
        "aria2.getGlobalOption", "aria2.changeGlobalOption", "aria2.purgeDownloadResult", "aria2.removeDownloadResult",
        "aria2.getVersion", "aria2.getSessionInfo", "aria2.shutdown", "aria2.forceShutdown", "aria2.getGlobalStat",
        "aria2.saveSession", "system.multicall", "system.listMethods", "system.listNotifications",
    ]

    static let notifications = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete",
        "aria2.onDownloadError", "aria2.onBtDownloadComplete",
    ]

    /// Answers what one POST body or WebSocket message holds, one call or a batch, within
    /// one `Aria2AnswerBudget`: a request of more calls than it allows runs none of them.
    /// The failure, for a single call or a refused request, gives the HTTP status.
    func answer(_ body: Aria2Body) async -> (response: JSONValue, failure: Aria2Failure?) {
        let request: JSONValue
        switch body {
        case .single(let call): request = call
        case .batch(let calls): request = .array(calls)
        }
        guard Aria2AnswerBudget.calls(in: request) <= Aria2AnswerBudget.maximumCalls else {
            let id = if case .single(let call) = body { call["id"] ?? .null } else { JSONValue.null }
            return (Aria2Response.error(Aria2AnswerBudget.tooManyCalls, id: id), Aria2AnswerBudget.tooManyCalls)
        }
        var budget = Aria2AnswerBudget()
        switch body {
        case .single(let call):
            return await answer(call, budget: &budget)
        case .batch(let calls):
            var answers: [JSONValue] = []
            for call in calls { answers.append(await answer(call, budget: &budget).response) }
            return (.array(answers), nil)
        }
    }

    /// Answers one request object: the response, and the failure when there is one (a
    /// single call's HTTP status comes from it).
    func answer(_ request: JSONValue, budget: inout Aria2AnswerBudget) async -> (response: JSONValue, failure: Aria2Failure?) {
        let call: Aria2Call
        do {
            call = try Aria2Call(request)
        } catch {
            return (Aria2Response.error(error, id: request["id"] ?? .null), error)
        }
        do {
            return (Aria2Response.result(try await perform(call, budget: &budget), id: call.id), nil)
        } catch {
            let failure = Self.failure(error)
            return (Aria2Response.error(failure, id: call.id), failure)
        }
    }

    /// Checks the call's token, then runs it; its result counts against `budget`.
    func perform(_ call: Aria2Call, budget: inout Aria2AnswerBudget) async throws -> JSONValue {
        var call = call
        let secret = call.takeToken()
        switch call.method {
        // These two need no token, as in aria2.
        case "system.listMethods": return .array(Self.methods.map(JSONValue.string))
        case "system.listNotifications": return .array(Self.notifications.map(JSONValue.string))
        case "system.multicall": return try await multicall(call, budget: &budget)
        default: break
        }
        guard Self.methods.contains(call.method) else { throw Aria2Failure.methodNotFound }
        if tokens.isEnforced {
            guard let secret, let scope = await tokens.scope(of: secret) else { throw Aria2Failure.unauthorized }
            guard scope.allows(Aria2Scope.required(method: call.method)) else {
                throw Aria2Scope.refusal(method: call.method, scope: scope)
            }
        }
        return try budget.admit(try await run(call))
    }

    /// `system.multicall`: each call's result wrapped as `[result]`, or its error object.
    private func multicall(_ call: Aria2Call, budget: inout Aria2AnswerBudget) async throws -> JSONValue {
        guard case .array(let calls)? = call.param(0) else { throw Aria2Failure("system.multicall takes an array of calls") }
        var answers: [JSONValue] = []
        for entry in calls {
            guard case .object = entry, case .string(let method)? = entry["methodName"], method != "system.multicall" else {
                answers.append(Aria2Failure("each call needs a methodName (and not system.multicall)").json)
                continue
            }
            let params: [JSONValue]
            switch entry["params"] {
            case nil, .null?: params = []
            case .array(let values)?: params = values
            default:
                answers.append(Aria2Failure("params must be an array").json)
                continue
            }
            do {
                answers.append(.array([try await perform(Aria2Call(method: method, params: params), budget: &budget)]))
            } catch {
                answers.append(Self.failure(error).json)
            }
        }
        return .array(answers)
    }

    private func run(_ call: Aria2Call) async throws -> JSONValue {
        switch call.method {
        case "aria2.addUri": return try await addUri(call)
        case "aria2.addTorrent", "aria2.addMetalink":
            throw Aria2Failure("\(call.method.dropFirst(9)) is not supported: Sluice downloads http and https URLs")
        case "aria2.remove", "aria2.forceRemove": return try await remove(call)
        case "aria2.pause", "aria2.forcePause":
            let (gid, id) = try call.jobID(at: 0)
            _ = try await jobs.pause(id: id)
            return .string(gid)
        case "aria2.unpause":
            let (gid, id) = try call.jobID(at: 0)
            _ = try await jobs.resume(id: id)
            return .string(gid)
        case "aria2.pauseAll", "aria2.forcePauseAll":
            _ = try await jobs.pauseAll(.states([.queued, .running]))
            return .string("OK")
        case "aria2.unpauseAll":
            _ = try await jobs.resumeAll(.states([.paused]))
            return .string("OK")
        case "aria2.tellStatus":
            let (_, id) = try call.jobID(at: 0)
            return try await download(id: id, keys: try call.keys(at: 1)).status(documents: documents, keys: try call.keys(at: 1))
        case "aria2.getUris":
            let (_, id) = try call.jobID(at: 0)
            return try await download(id: id, keys: ["files"]).uris
        case "aria2.getFiles":
            let (_, id) = try call.jobID(at: 0)
            return try await download(id: id, keys: ["files"]).files(documents: documents)
        case "aria2.getPeers":
            _ = try await download(id: try call.jobID(at: 0).id, keys: ["gid"])
            return .array([])
        case "aria2.getServers": return try await servers(call)
        case "aria2.tellActive":
            let keys = try call.keys(at: 0)
            let active = try await jobs.list(states: [.running], limit: 1000, after: nil).reversed()
            return try await statuses(Array(active).map { Aria2Download(job: $0) }, keys: keys)
        case "aria2.tellWaiting": return try await tellWaiting(call)
        case "aria2.tellStopped": return try await tellStopped(call)
        case "aria2.changePosition": return try await changePosition(call)
        case "aria2.changeUri": return try await changeUri(call)
        case "aria2.getOption":
            let (_, id) = try call.jobID(at: 0)
            return options(of: try await download(id: id, keys: ["gid"]).job)
        case "aria2.changeOption": return try await changeOption(call)
        case "aria2.getGlobalOption": return await globalOptions()
        case "aria2.changeGlobalOption":
            let options = try Aria2GlobalOptions(call.param(0))
            if options.maxActive != nil || options.limitRate != nil {
                _ = try await jobs.updateQueue(QueueSettingsPatch(maxActive: options.maxActive, limitRate: options.limitRate))
            }
            return .string("OK")
        case "aria2.getGlobalStat": return try await globalStat()
        case "aria2.purgeDownloadResult":
            results.forgetAll()
            _ = try await jobs.deleteAll(states: JobState.finished, deleteFile: false)
            return .string("OK")
        case "aria2.removeDownloadResult": return try await removeDownloadResult(call)
        case "aria2.getVersion":
            return .object([
                ("version", .string(Self.aria2Version)),
                ("enabledFeatures", .array(["Async DNS", "GZip", "HTTPS", "Message Digest"].map(JSONValue.string))),
            ])
        case "aria2.getSessionInfo": return .object([("sessionId", .string(session))])
        case "aria2.saveSession": return .string("OK")
        case "aria2.shutdown", "aria2.forceShutdown":
            // Both graceful: downloads are checkpointed, and the server drains after them,
            // so this answer is sent.
            guard let shutdown else {
                throw Aria2Failure("shutdown through RPC is not enabled on this service (see --rpc-allow-shutdown)")
            }
            shutdown.request()
            return .string("OK")
        default: throw Aria2Failure.methodNotFound
        }
    }

    /// Any error as aria2's: code 1 with the service's message.
    static func failure(_ error: any Error) -> Aria2Failure {
        switch error {
        case let failure as Aria2Failure: return failure
        case let error as SluiceError: return Aria2Failure(error.message)
        default: return Aria2Failure("the call failed")
        }
    }
}
