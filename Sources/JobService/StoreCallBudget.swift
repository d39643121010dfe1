/// How long one store call may take, all waits included, when the caller has an answer to
/// give: a request's calls are bounded so that a stalled store answers 503 within it, not
/// after the store's own timeout. Tasks a request starts (a download's run) inherit it.
public enum StoreCallBudget {
    /// A request's budget (`StoreCallBudget.$limit.withValue`); nil for the store's default.
    @TaskLocal public static var limit: Duration?

    /// What a request to the API may spend on each store call.
    public static let request: Duration = .seconds(2)
}
