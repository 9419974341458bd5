"""Independent SigV4 oracle: signs requests with botocore's S3SigV4Auth (pinned in scripts/pyenv).

Takes a JSON list of cases as its argument, each {method, host, path (not encoded), query: [[k, v]...]
(not encoded), headers, payloadHash, amzDate, accessKeyId, secretAccessKey, region}; prints one JSON
list of Authorization values in the same order.
"""
import json
import sys

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode


def authorization(case):
    # Encoded the way botocore's REST serializer encodes keys and query parameters.
    query = "&".join(f"{percent_encode(k)}={percent_encode(v)}" for k, v in case["query"])
    path = percent_encode(case["path"], safe="/~")
    url = f"http://{case['host']}{path}" + (f"?{query}" if query else "")
    request = AWSRequest(method=case["method"], url=url, data=b"")
    request.headers["Host"] = case["host"]
    for name, value in case["headers"]:
        request.headers[name] = value
    request.headers["X-Amz-Date"] = case["amzDate"]
    request.headers["X-Amz-Content-SHA256"] = case["payloadHash"]
    request.context["timestamp"] = case["amzDate"]
    auth = S3SigV4Auth(Credentials(case["accessKeyId"], case["secretAccessKey"]), "s3", case["region"])
    canonical = auth.canonical_request(request)
    signature = auth.signature(auth.string_to_sign(request, canonical), request)
    scope = f"{case['amzDate'][:8]}/{case['region']}/s3/aws4_request"
    return (f"AWS4-HMAC-SHA256 Credential={case['accessKeyId']}/{scope}, "
            f"SignedHeaders={auth.signed_headers(auth.headers_to_sign(request))}, Signature={signature}")


print(json.dumps([authorization(case) for case in json.loads(sys.argv[1])]))
