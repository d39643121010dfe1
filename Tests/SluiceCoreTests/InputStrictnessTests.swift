import Foundation
import Testing
@testable import SluiceCore

/// Issue 21, point 10: JSON objects with a key twice are refused rather than read one way or
/// the other.
@Suite struct InputStrictnessTests {
    @Test func duplicateKeysAreFoundAtAnyDepthAndDecoded() {
        let cases: [(String, String?)] = [
            (#"{"url":"a","url":"b"}"#, "url"),
            (#"{"url":"a","\u0075rl":"b"}"#, "url"),
            (#"{"headers":{"A":"1","A":"2"},"url":"x"}"#, "A"),
            (#"{"a":{"x":1},"b":{"x":2}}"#, nil),
            (#"{"a":[{"k":1},{"k":2}]}"#, nil),
            (#"{"a":"{\"url\":1,\"url\":2}"}"#, nil),
            (#"{"a":1,"b":2}"#, nil),
            ("not json", nil),
        ]
        for (text, duplicate) in cases {
            #expect(JSONDuplicateKeys.first(in: Array(text.utf8)) == duplicate, "\(text)")
        }
    }
}
