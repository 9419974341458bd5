// Callback authentication (`CallbackVerifier`): the Authorization header, the signed headers,
// `X-Qiniu-Date`, and `RequestTarget`.
//
// Input: fields mode, authorization, method, target, Host, Content-Type; a count byte and that
// many header name/value fields; then the body.
//   mode 0: the authorization is verified as received (must not trap);
//   mode 1/2: the harness signs the request (Qiniu / QBox) with the dev key and puts the
//   authorization field between the scheme and the credentials: the request verifies exactly
//   when that field is empty (a signed but malformed X-Qiniu-Date is a 400), and the signed date
//   is the parsed header. A signed body that changes fails.
@testable import UpCore

enum CallbackTarget {
    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let mode = input.byte() % 3
        let authorization = input.text()
        let method = input.text()
        let target = input.text()
        let host = input.text()
        let contentType = input.text()
        var headers: [(String, String)] = [("Host", host), ("Content-Type", contentType)]
        for _ in 0..<(input.byte() % 6) { headers.append((input.text(), input.text())) }
        let body = input.rest()

        checkDate(authorization)
        let requestTarget = RequestTarget.of(url: target)
        require(
            requestTarget == referenceTarget(target),
            "RequestTarget.of(url: \(show(target))) is \(show(requestTarget)), not \(show(referenceTarget(target)))")
        let verifier = CallbackVerifier(keys: keys)
        func verify(_ authorization: String, body: [UInt8]) -> Result<CallbackVerifier.Verified, UpError> {
            attempt { () throws(UpError) in
                try verifier.verify(authorization: authorization, method: method, target: target, headers: headers, body: body)
            }
        }
        if mode == 0 {
            _ = verify(authorization, body: body)
            return
        }
        let signedType = CallbackVerifier.header("Content-Type", in: headers)
        let credentials: String
        let scheme: String
        if mode == 1 {
            let header = QiniuSignature.sign(
                method: method, target: target, host: CallbackVerifier.header("Host", in: headers) ?? "",
                contentType: signedType, headers: headers, body: body, accessKey: devAccessKey, mac: devMac)
            (scheme, credentials) = ("Qiniu ", String(header.utf8.dropFirst(6))!)
        } else {
            (scheme, credentials) = ("QBox ", QBoxSignature.token(
                target: target, body: body, contentType: signedType, accessKey: devAccessKey, mac: devMac))
        }
        let result = verify(scheme + authorization + credentials, body: body)
        guard authorization.isEmpty else {
            if case .success = result {
                require(false, "\(show(scheme + authorization + credentials)) verified: \(show(authorization)) was ignored")
            }
            return
        }
        let date = mode == 1 ? QiniuSignature.signedHeaders(headers).first(where: { $0.name == "X-Qiniu-Date" })?.value : nil
        switch result {
        case .success(let verified):
            require(verified.scheme == (mode == 1 ? .qiniu : .qbox), "verified as \(verified.scheme)")
            require(verified.accessKey == devAccessKey, "verified access key \(show(verified.accessKey))")
            require(
                verified.signedDate == date.flatMap { QiniuDate.parse($0) },
                "signed date \(String(describing: verified.signedDate)) for \(date.map(show) ?? "nil")")
        case .failure(let error):
            require(
                error.code == .badRequest && date.map { QiniuDate.parse($0) == nil } == true,
                "a correctly signed callback was refused: \(show(error))")
        }
        // A change to a signed body is caught.
        let bodySigned =
            mode == 1
            ? signedType.map { !$0.isEmpty && $0 != "application/octet-stream" } == true
            : signedType == QBoxSignature.formContentType
        if bodySigned, !body.isEmpty, case .success = result {
            var tampered = body
            tampered[tampered.count - 1] ^= 1
            if case .success = verify(scheme + credentials, body: tampered) {
                require(false, "a callback verified after its signed body changed")
            }
        }
    }

    /// The request-target an HTTP client sends for `url`, split by bytes: no fragment; after
    /// `scheme://authority`, from the first "/" or "?" ("/" prepended to a bare query; "/" when
    /// neither); text without "://" as is.
    static func referenceTarget(_ url: String) -> String {
        var bytes = Array(url.utf8)
        if let fragment = bytes.firstIndex(of: UInt8(ascii: "#")) { bytes = Array(bytes[..<fragment]) }
        let scheme = Array("://".utf8)
        guard let schemeEnd = (0..<max(0, bytes.count - 2)).first(where: { Array(bytes[$0..<($0 + 3)]) == scheme })
        else { return String(decoding: bytes, as: UTF8.self) }
        let rest = bytes[(schemeEnd + 3)...]
        guard let start = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else { return "/" }
        return (bytes[start] == UInt8(ascii: "?") ? "/" : "") + String(decoding: bytes[start...], as: UTF8.self)
    }

    /// `X-Qiniu-Date` parses only canonical text, which formats back the same; formatting
    /// any 0…9999 date parses back.
    static func checkDate(_ text: String) {
        if let seconds = QiniuDate.parse(text) {
            require(QiniuDate.format(seconds) == text, "X-Qiniu-Date \(show(text)) formats back differently")
        }
        let seconds = Int64(text.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) } % 253_402_300_800)
        require(QiniuDate.parse(QiniuDate.format(seconds)) == seconds, "QiniuDate round trip of \(seconds)")
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for (group, mode) in [("qiniu_v2_form", 1), ("qiniu_v2_json", 1), ("qbox_callback_form", 2)] {
            guard let url = vectors.string(group, "url") else { continue }
            let headers: [(key: String, value: JSONValue)] =
                if case .object(let members)? = vectors.json[group]?["headers"] { members } else { [] }
            let contentType =
                vectors.string(group, "content_type") ?? headers.first { $0.key == "Content-Type" }?.value.stringValue
                ?? ""
            let extra = headers.filter { $0.key != "Host" && $0.key != "Content-Type" }
            for authorizationMode in [0, mode] {
                seeds.append(input {
                    $0.byte(UInt8(authorizationMode))
                    $0.field(authorizationMode == 0 ? vectors.string(group, "authorization") ?? "" : "")
                    $0.field(vectors.string(group, "method") ?? "POST")
                    $0.field(RequestTarget.of(url: url))
                    $0.field("127.0.0.1:8080")
                    $0.field(contentType)
                    $0.byte(UInt8(extra.count))
                    for (name, value) in extra {
                        $0.field(name)
                        $0.field(value.stringValue ?? "")
                    }
                    $0.rest(vectors.string(group, "body") ?? "")
                })
            }
        }
        seeds.append(input {
            $0.byte(0); $0.field(""); $0.field("POST"); $0.field("https://u:p@h:8080?q=/a#f/g"); $0.field("h")
        })
        seeds.append(input {
            $0.byte(1); $0.field(""); $0.field("GET"); $0.field("/v2/query?ak=test-ak&bucket=b"); $0.field("up")
            $0.field(""); $0.byte(2); $0.field("x-qiniu-date"); $0.field("20240229T235959Z"); $0.field("X-Qiniu-")
            $0.field("v")
        })
        return seeds
    }
}
