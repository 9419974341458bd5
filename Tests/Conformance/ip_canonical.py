"""Prints what Python's ipaddress module makes of each line of a file: the canonical text of the
address (the IPv4 address for an IPv4-mapped IPv6 one), or "invalid". The oracle for
Tests/BizServerTests/Network/IPAddressTests.swift.

    ip_canonical.py FILE
"""
import ipaddress
import sys

for line in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if not line:
        continue
    try:
        address = ipaddress.ip_address(line)
    except ValueError:
        print("invalid")
        continue
    if address.version == 6 and address.scope_id is not None:
        print("zone")  # we refuse zones; the test checks that separately
    elif address.version == 6 and address.ipv4_mapped is not None:
        print(address.ipv4_mapped)
    else:
        print(address.compressed)
