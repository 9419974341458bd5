#!/usr/bin/env python3
"""End-user JWTs for biz-server's tests, made with PyJWT and cryptography (never with our code).

    jwt_tokens.py --now 1900000000 --issuer https://auth.test/ --audience upgate

Prints one JSON object:
  jwks          the JWKS biz-server is configured with: RSA "rsa-1" (RS256), P-256 "ec-1" (ES256),
                Ed25519 "ed-1" (EdDSA), public parts only
  jwksRotated   what the identity provider serves after rotating to "rsa-2"
  hs256Secret   the shared secret of the HS256 tokens
  tokens        name -> compact JWT; times relative to --now. Valid ones are named valid_*; every
                other one must be refused (the Swift test says with which reason).
"""
import argparse
import base64
import hashlib
import hmac
import json
import secrets
import sys

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_jwk(algorithm, private_key, kid, alg):
    jwk = algorithm.to_jwk(private_key.public_key(), as_dict=True)
    jwk.update({"kid": kid, "alg": alg, "use": "sig"})
    return jwk


def hand_signed(header, payload_text, secret):
    """A JWS built by hand (header and payload as given, byte for byte), HMAC-SHA256 signed."""
    signing_input = b64(json.dumps(header, separators=(",", ":")).encode()) + "." + b64(payload_text.encode())
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(signature)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--now", type=int, required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--audience", required=True)
    args = ap.parse_args()
    now, iss, aud = args.now, args.issuer, args.audience

    rsa1 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec1 = ec.generate_private_key(ec.SECP256R1())
    ed1 = ed25519.Ed25519PrivateKey.generate()
    secret = secrets.token_urlsafe(32)

    jwks = {"keys": [public_jwk(RSAAlgorithm, rsa1, "rsa-1", "RS256"),
                     public_jwk(ECAlgorithm, ec1, "ec-1", "ES256"),
                     public_jwk(OKPAlgorithm, ed1, "ed-1", "EdDSA")]}
    rotated = {"keys": [public_jwk(RSAAlgorithm, rsa2, "rsa-2", "RS256")]}

    base = {"iss": iss, "aud": aud, "sub": "user-42", "iat": now - 10, "exp": now + 600}

    def claims(**changes):
        out = dict(base)
        for name, value in changes.items():
            if value is None:
                out.pop(name, None)
            else:
                out[name] = value
        return out

    def rs(payload, kid="rsa-1", key=rsa1, alg="RS256"):
        return jwt.encode(payload, key, algorithm=alg, headers={"kid": kid})

    rsa_public_pem = rsa1.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    valid = rs(base)
    header, payload, signature = valid.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[len(raw) // 2] ^= 0x01

    tokens = {
        "valid_rs256": valid,
        "valid_es256": jwt.encode(base, ec1, algorithm="ES256", headers={"kid": "ec-1"}),
        "valid_eddsa": jwt.encode(base, ed1, algorithm="EdDSA", headers={"kid": "ed-1"}),
        "valid_hs256": jwt.encode(base, secret, algorithm="HS256"),
        "valid_hs256_with_kid": jwt.encode(base, secret, algorithm="HS256", headers={"kid": "app-secret"}),
        "valid_aud_array": rs(claims(aud=["other-service", aud])),
        "valid_expired_within_leeway": rs(claims(exp=now - 30)),
        "valid_nbf_within_leeway": rs(claims(nbf=now + 30)),
        "valid_auth0_sub": rs(claims(sub="auth0|5f7c8ec7c33c6c004bbafe82")),
        "valid_rotated": rs(base, kid="rsa-2", key=rsa2),
        "alg_none": jwt.encode(base, None, algorithm="none"),
        "alg_None_with_kid": b64(b'{"alg":"None","kid":"rsa-1"}') + "." + b64(json.dumps(base).encode()) + ".",
        # The classic confusion attack: HS256 keyed with the RSA public key's PEM (PyJWT refuses
        # to do this, so it is signed by hand with the standard library).
        "hs256_rsa_public_key_as_secret": hand_signed({"alg": "HS256", "kid": "rsa-1"}, json.dumps(base), rsa_public_pem),
        "hs256_rsa_public_key_as_secret_no_kid": hand_signed({"alg": "HS256"}, json.dumps(base), rsa_public_pem),
        "es256_under_rsa_kid": jwt.encode(base, ec1, algorithm="ES256", headers={"kid": "rsa-1"}),
        "rs384_unsupported": rs(base, alg="RS384"),
        "unknown_kid": rs(base, kid="rsa-2", key=rsa2),
        "bad_signature": header + "." + payload + "." + b64(bytes(raw)),
        "signed_by_another_key": rs(base, key=impostor),
        "claims_tampered": header + "." + b64(json.dumps(claims(sub="admin")).encode()) + "." + signature,
        "expired": rs(claims(exp=now - 61)),
        "not_yet_valid": rs(claims(nbf=now + 61)),
        "missing_exp": rs(claims(exp=None)),
        "wrong_issuer": rs(claims(iss="https://evil.test/")),
        "issuer_case_differs": rs(claims(iss=iss.upper())),
        "wrong_audience": rs(claims(aud="someone-else")),
        "audience_array_without_us": rs(claims(aud=["a", "b"])),
        "missing_audience": rs(claims(aud=None)),
        "missing_sub": rs(claims(sub=None)),
        "sub_with_slash": rs(claims(sub="alice/../bob")),
        "sub_dotdot": rs(claims(sub="..")),
        "sub_control": rs(claims(sub="al\u0001ice")),
        "sub_too_long": rs(claims(sub="u" * 129)),
        "sub_magic_variable": rs(claims(sub="$(fname)")),
        "sub_empty": rs(claims(sub="")),
        "exp_as_string": rs(claims(exp=str(now + 600))),
        "sub_as_number": rs(claims(sub=42)),
        "duplicate_sub": hand_signed({"alg": "HS256"}, json.dumps(base)[:-1] + ', "sub": "admin"}', secret.encode()),
        "claims_not_an_object": hand_signed({"alg": "HS256"}, "[1, 2]", secret.encode()),
        "hs256_wrong_secret": jwt.encode(base, secret + "x", algorithm="HS256"),
    }
    json.dump({"jwks": jwks, "jwksRotated": rotated, "hs256Secret": secret, "tokens": tokens}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
