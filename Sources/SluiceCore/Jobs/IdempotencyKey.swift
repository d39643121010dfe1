/// `Idempotency-Key` on `POST /jobs`: a retried request with the same key gets the job
/// the first one made, for a day.
public enum IdempotencyKey {
    /// Seconds a key is remembered.
    public static let lifetime: Double = 24 * 60 * 60

    /// 1 to 255 visible ASCII characters.
    public static func validate(_ key: String) throws {
        guard (1...255).contains(key.utf8.count), key.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw SluiceError(
                .invalidField, "Idempotency-Key must be 1 to 255 visible ASCII characters", field: "Idempotency-Key"
            )
        }
    }
}
