import GRDB
public enum JobStorePlaceholder {}
