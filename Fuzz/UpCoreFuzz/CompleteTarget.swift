// The v2 complete body (`CompleteMultipartRequest`) and the JSON parser under it.
//
// Input: the body. A parsed request serializes to JSON that parses back to the same request;
// its parts are strictly ascending within 1…10000 with non-empty etags; variables keep their prefix.
@testable import UpCore

enum CompleteTarget {
    static func run(_ data: [UInt8]) {
        checkJSONRoundTrip(data)
        guard case .success(let request) = attempt({ () throws(UpError) in try CompleteMultipartRequest.parse(data) })
        else { return }
        require(!request.parts.isEmpty, "complete request without parts")
        var previous = 0
        for part in request.parts {
            require(
                part.partNumber > previous && part.partNumber <= MultipartPath.maxPartNumber && !part.etag.isEmpty,
                "bad part \(part.partNumber) after \(previous)")
            previous = part.partNumber
        }
        for (name, _) in request.customVariables {
            require(name.hasPrefix("x:") && name.utf8.count > 2, "custom variable \(show(name))")
        }
        for (name, _) in request.metadata {
            require(name.hasPrefix("x-qn-meta-") && name.utf8.count > 10, "metadata \(show(name))")
        }
        require(
            Set(request.customVariables.map(\.name)).count == request.customVariables.count,
            "repeated custom variable name")
        let text = request.serialized()
        switch attempt({ () throws(UpError) in try CompleteMultipartRequest.parse(Array(text.utf8)) }) {
        case .success(let again):
            require(again == request, "complete round trip changed the request: \(show(data)) -> \(show(text))")
            require(again.serialized() == text, "complete serialization not stable")
        case .failure(let error):
            require(false, "serialized complete body does not parse (\(show(error))): \(show(text))")
        }
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        [
            #"{"parts":[{"etag":"FqR","partNumber":1},{"etag":"Fx","partNumber":3}],"fname":"a.txt","mimeType":null,"customVars":{"x:a":"A","x:n":1,"y":2},"metadata":{"x-qn-meta-c":"red"}}"#,
            #"{"parts":[{"etag":"e","partNumber":10000,"size":5}],"customVars":{"x:a":"1","x:a":true,"x:b":null}}"#,
            #" {"parts" : [ {"partNumber":2.0,"etag":"\u00e9\ud83d\ude00"} ] , "metadata":null, "z":[1e5,-0,{}]} "#,
        ].map { Array($0.utf8) }
    }
}
