import SluiceCore
import Testing

/// `sluice add` with many URLs: batches a service takes (at most 1,000 jobs, under its 64 KiB
/// body limit whatever the headers), and a refusal named by the URL's place.
@Suite struct CreateJobBatchSplitTests {
    @Test func batchesStayUnderTheBodyLimitAndKeepEveryBodyInOrder() {
        let cookie = String(repeating: "c", count: 1024)
        let bodies: [JSONValue] = (0..<500).map { index in
            .object([("url", .string("http://example.com/\(index)")), ("headers", .object([("Cookie", .string(cookie))]))])
        }
        let batches = CreateJobBatch.batches(of: bodies)
        #expect(batches.count > 1)
        for batch in batches {
            let size = JSONValue.object([("jobs", .array(batch.bodies))]).text.utf8.count
            #expect(size < 64 << 10, "a batch of \(size) bytes")
        }
        #expect(batches.flatMap(\.bodies).map(\.text) == bodies.map(\.text))
        #expect(batches.map(\.first) == batches.indices.map { i in batches[..<i].reduce(0) { $0 + $1.bodies.count } })
        let small: [JSONValue] = (0..<2500).map { .object([("url", .string("http://x/\($0)"))]) }
        #expect(CreateJobBatch.batches(of: small).map(\.bodies.count) == [1000, 1000, 500])
    }

    @Test func aRefusalNamesTheJobByItsPlaceAmongAll() {
        #expect(
            CreateJobBatch.renumbered("jobs[3]: url must be an absolute http or https URL (400)", first: 200)
                == "URL 204: url must be an absolute http or https URL (400)")
        #expect(CreateJobBatch.renumbered("the body is larger than 64 KiB (413)", first: 200) == "the body is larger than 64 KiB (413)")
    }
}
