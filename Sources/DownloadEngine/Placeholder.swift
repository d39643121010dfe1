import AsyncHTTPClient
import Crypto
import Logging
public enum DownloadEnginePlaceholder {}
