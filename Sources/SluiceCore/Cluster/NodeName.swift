/// A cluster node's name (`--node-name`): the owner recorded on its leases, shown by
/// `GET /nodes` and in metrics, so short and plain.
public enum NodeName {
    public static func isValid(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }
}
