#!/usr/bin/python3
"""A CRI client of the tests' own: kubelet's side of the runtime.v1 gRPC API, for the
calls and fields tests/oci/150-cri.sh uses, so that no crictl is needed (Debian 12 has
none). Requests are given and responses printed as JSON; the protobuf wire format is
encoded and decoded here from the field numbers of cri-api's runtime/v1 api.proto, and
grpcio only carries the bytes.

  cri-client.py SOCKET METHOD [REQUEST-JSON]   call METHOD, print its response as JSON
  cri-client.py --decode MESSAGE               decode stdin as MESSAGE, print it as JSON

A request field this client does not know is refused, naming it; a response may carry
fields it does not know (newer runtimes do), which are skipped, but bytes that are not
protobuf, a known field of the wrong kind and a response lacking what the call must
return are errors naming the call and the offset. Exit status 0, or 1 with the reason on
standard error ("cri-client: METHOD: ..."; gRPC errors keep their status name, e.g.
UNIMPLEMENTED where the runtime has no CRI service).
"""
import json
import sys

# Enums by name (api.proto); an unknown number from a runtime is printed as the number.
ENUMS = {
    "NamespaceMode": ["POD", "CONTAINER", "NODE", "TARGET"],
    "ProfileType": ["RuntimeDefault", "Unconfined", "Localhost"],
    "ContainerState": ["CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED",
                       "CONTAINER_UNKNOWN"],
}

# MESSAGE: {field: (number, type, repeated)}; type is a scalar, "map" (map<string,
# string>), "enum:NAME" or a message name.
SCHEMA = {
    "VersionRequest": {"version": (1, "string", False)},
    "VersionResponse": {"version": (1, "string", False), "runtime_name": (2, "string", False),
                        "runtime_version": (3, "string", False),
                        "runtime_api_version": (4, "string", False)},
    "PodSandboxMetadata": {"name": (1, "string", False), "uid": (2, "string", False),
                           "namespace": (3, "string", False), "attempt": (4, "uint32", False)},
    "NamespaceOption": {"network": (1, "enum:NamespaceMode", False),
                        "pid": (2, "enum:NamespaceMode", False),
                        "ipc": (3, "enum:NamespaceMode", False)},
    "SecurityProfile": {"profile_type": (1, "enum:ProfileType", False),
                        "localhost_ref": (2, "string", False)},
    "LinuxSandboxSecurityContext": {
        "namespace_options": (1, "NamespaceOption", False), "privileged": (6, "bool", False),
        "seccomp_profile_path": (7, "string", False), "seccomp": (9, "SecurityProfile", False)},
    "LinuxPodSandboxConfig": {"cgroup_parent": (1, "string", False),
                              "security_context": (2, "LinuxSandboxSecurityContext", False)},
    "PodSandboxConfig": {"metadata": (1, "PodSandboxMetadata", False),
                         "hostname": (2, "string", False), "log_directory": (3, "string", False),
                         "labels": (6, "map", False), "annotations": (7, "map", False),
                         "linux": (8, "LinuxPodSandboxConfig", False)},
    "RunPodSandboxRequest": {"config": (1, "PodSandboxConfig", False),
                             "runtime_handler": (2, "string", False)},
    "RunPodSandboxResponse": {"pod_sandbox_id": (1, "string", False)},
    "ContainerMetadata": {"name": (1, "string", False), "attempt": (2, "uint32", False)},
    "ImageSpec": {"image": (1, "string", False)},
    "LinuxContainerSecurityContext": {
        "privileged": (2, "bool", False), "namespace_options": (3, "NamespaceOption", False),
        "seccomp_profile_path": (10, "string", False), "seccomp": (15, "SecurityProfile", False)},
    "LinuxContainerConfig": {"security_context": (2, "LinuxContainerSecurityContext", False)},
    "ContainerConfig": {"metadata": (1, "ContainerMetadata", False),
                        "image": (2, "ImageSpec", False), "command": (3, "string", True),
                        "args": (4, "string", True), "labels": (9, "map", False),
                        "annotations": (10, "map", False), "log_path": (11, "string", False),
                        "linux": (15, "LinuxContainerConfig", False)},
    "CreateContainerRequest": {"pod_sandbox_id": (1, "string", False),
                               "config": (2, "ContainerConfig", False),
                               "sandbox_config": (3, "PodSandboxConfig", False)},
    "CreateContainerResponse": {"container_id": (1, "string", False)},
    "ContainerIdRequest": {"container_id": (1, "string", False)},
    "ContainerStatusRequest": {"container_id": (1, "string", False),
                               "verbose": (2, "bool", False)},
    "ContainerStatus": {"id": (1, "string", False), "metadata": (2, "ContainerMetadata", False),
                        "state": (3, "enum:ContainerState", False),
                        "created_at": (4, "int64", False), "started_at": (5, "int64", False),
                        "finished_at": (6, "int64", False), "exit_code": (7, "int32", False),
                        "reason": (10, "string", False), "message": (11, "string", False),
                        "labels": (12, "map", False), "annotations": (13, "map", False),
                        "log_path": (15, "string", False)},
    "ContainerStatusResponse": {"status": (1, "ContainerStatus", False)},
    "StopContainerRequest": {"container_id": (1, "string", False), "timeout": (2, "int64", False)},
    "PodSandboxIdRequest": {"pod_sandbox_id": (1, "string", False)},
    "ImageStatusRequest": {"image": (1, "ImageSpec", False)},
    "Image": {"id": (1, "string", False), "repo_tags": (2, "string", True)},
    "ImageStatusResponse": {"image": (1, "Image", False)},
    "Empty": {},
    # A map<string, string> entry on the wire.
    "MapEntry": {"key": (1, "string", False), "value": (2, "string", False)},
}

# METHOD: (service, request, response, fields the response must have).
RUNTIME, IMAGES = "runtime.v1.RuntimeService", "runtime.v1.ImageService"
METHODS = {
    "Version": (RUNTIME, "VersionRequest", "VersionResponse",
                ["runtime_name", "runtime_api_version"]),
    "RunPodSandbox": (RUNTIME, "RunPodSandboxRequest", "RunPodSandboxResponse",
                      ["pod_sandbox_id"]),
    "CreateContainer": (RUNTIME, "CreateContainerRequest", "CreateContainerResponse",
                        ["container_id"]),
    "StartContainer": (RUNTIME, "ContainerIdRequest", "Empty", []),
    "ContainerStatus": (RUNTIME, "ContainerStatusRequest", "ContainerStatusResponse", ["status"]),
    "StopContainer": (RUNTIME, "StopContainerRequest", "Empty", []),
    "RemoveContainer": (RUNTIME, "ContainerIdRequest", "Empty", []),
    "StopPodSandbox": (RUNTIME, "PodSandboxIdRequest", "Empty", []),
    "RemovePodSandbox": (RUNTIME, "PodSandboxIdRequest", "Empty", []),
    # No image in the response: the runtime does not have it.
    "ImageStatus": (IMAGES, "ImageStatusRequest", "ImageStatusResponse", []),
}

VARINT_TYPES = ("uint32", "int32", "int64", "bool")
WT_VARINT, WT_I64, WT_LEN, WT_I32 = 0, 1, 2, 5


class Bad(Exception):
    pass


# --- encoding ------------------------------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1  # negative int32/int64 go out as ten bytes, as protobuf has it
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wt):
    return varint(num << 3 | wt)


def length_delimited(num, data):
    return key(num, WT_LEN) + varint(len(data)) + data


def encode_scalar(where, typ, num, v):
    if typ.startswith("enum:"):
        names = ENUMS[typ[5:]]
        if isinstance(v, str):
            if v not in names:
                raise Bad(f"{where}: {v!r} is not one of {', '.join(names)}")
            v = names.index(v)
        typ = "int32"
    if typ == "string":
        if not isinstance(v, str):
            raise Bad(f"{where}: wants a string, not {json.dumps(v)}")
        return length_delimited(num, v.encode())
    if typ == "bool":
        if not isinstance(v, bool):
            raise Bad(f"{where}: wants true or false, not {json.dumps(v)}")
        return key(num, WT_VARINT) + varint(int(v))
    bounds = {"uint32": (0, 2**32 - 1), "int32": (-2**31, 2**31 - 1),
              "int64": (-2**63, 2**63 - 1)}[typ]
    if isinstance(v, bool) or not isinstance(v, int) or not bounds[0] <= v <= bounds[1]:
        raise Bad(f"{where}: wants a {typ}, not {json.dumps(v)}")
    return key(num, WT_VARINT) + varint(v)


def encode(msg, obj, where=None):
    where = where or msg
    if not isinstance(obj, dict):
        raise Bad(f"{where}: wants an object ({msg}), not {json.dumps(obj)}")
    fields = SCHEMA[msg]
    out = bytearray()
    for name, v in obj.items():
        if name not in fields:
            raise Bad(f"{where}: unknown field {name!r} (this client knows "
                      f"{', '.join(fields) or 'none'})")
        num, typ, repeated = fields[name]
        at = f"{where}.{name}"
        if repeated and not isinstance(v, list):
            raise Bad(f"{at}: wants a list, not {json.dumps(v)}")
        for i, item in enumerate(v if repeated else [v]):
            here = f"{at}[{i}]" if repeated else at
            if typ == "map":
                if not isinstance(item, dict):
                    raise Bad(f"{here}: wants an object of strings, not {json.dumps(item)}")
                for k, val in item.items():
                    out += length_delimited(num, encode("MapEntry", {"key": k, "value": val},
                                                        f"{here}[{k!r}]"))
            elif typ in SCHEMA:
                out += length_delimited(num, encode(typ, item, here))
            else:
                out += encode_scalar(here, typ, num, item)
    return bytes(out)


# --- decoding ------------------------------------------------------------------------

class Reader:
    def __init__(self, data, what, base=0):
        self.data, self.pos, self.what, self.base = data, 0, what, base

    def fail(self, why):
        raise Bad(f"{self.what}, byte {self.base + self.pos}: {why}")

    def varint(self):
        n = shift = 0
        for _ in range(10):
            if self.pos >= len(self.data):
                self.fail("truncated varint")
            b = self.data[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if n >= 1 << 64:
                    self.fail("varint beyond 64 bits")
                return n
        self.fail("varint longer than 10 bytes")

    def take(self, n):
        if n > len(self.data) - self.pos:
            self.fail(f"length {n} runs past the end ({len(self.data) - self.pos} bytes left)")
        start = self.pos
        self.pos += n
        return self.data[start:self.pos], self.base + start


def signed(n, bits):
    n &= (1 << 64) - 1
    if n >= 1 << 63:
        n -= 1 << 64
    if not -(1 << (bits - 1)) <= n < 1 << (bits - 1):
        raise ValueError
    return n


def decode(msg, data, what=None, base=0):
    what = what or msg
    fields = {num: (name, typ, rep) for name, (num, typ, rep) in SCHEMA[msg].items()}
    r = Reader(data, what, base)
    out = {}
    while r.pos < len(data):
        k = r.varint()
        num, wt = k >> 3, k & 7
        if num == 0:
            r.fail("field number 0")
        if wt == WT_VARINT:
            val = r.varint()
        elif wt == WT_I64:
            val = r.take(8)
        elif wt == WT_LEN:
            val = r.take(r.varint())
        elif wt == WT_I32:
            val = r.take(4)
        else:
            r.fail(f"wire type {wt} (field {num}), which proto3 does not send")
        if num not in fields:
            continue  # a field this client does not use: protobuf's rule is to skip it
        name, typ, repeated = fields[num]
        at = f"{what}.{name}"
        want = WT_VARINT if typ in VARINT_TYPES or typ.startswith("enum:") else WT_LEN
        if wt != want:
            r.fail(f"{name} (field {num}) came with wire type {wt}, not {want}")
        if typ == "map":
            entry = decode("MapEntry", val[0], at, val[1])
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
            continue
        if typ in SCHEMA:
            v = decode(typ, val[0], at, val[1])
        elif typ == "string":
            try:
                v = val[0].decode()
            except UnicodeDecodeError:
                raise Bad(f"{at}, byte {val[1]}: not UTF-8") from None
        elif typ == "bool":
            v = val != 0
        elif typ == "uint32":
            if val >= 1 << 32:
                r.fail(f"{name} {val} does not fit a uint32")
            v = val
        else:
            bits = 64 if typ == "int64" else 32
            try:
                v = signed(val, bits)
            except ValueError:
                r.fail(f"{name} {val} does not fit an int{bits}")
            if typ.startswith("enum:"):
                names = ENUMS[typ[5:]]
                v = names[v] if 0 <= v < len(names) else v
        if repeated:
            out.setdefault(name, []).append(v)
        else:
            out[name] = v  # proto3: the last one wins
    return out


# --- the calls -----------------------------------------------------------------------

def call(sock, method, req_json, timeout):
    if method not in METHODS:
        raise Bad(f"unknown method {method!r} (this client knows {', '.join(METHODS)})")
    service, req_msg, resp_msg, required = METHODS[method]
    try:
        req = json.loads(req_json)
    except json.JSONDecodeError as e:
        raise Bad(f"{method}: the request is not JSON: {e}") from None
    body = encode(req_msg, req, method)
    try:
        import grpc
    except ImportError:
        raise Bad("python3-grpcio is not installed (apt-get install python3-grpcio)") from None
    with grpc.insecure_channel("unix:" + sock) as ch:
        rpc = ch.unary_unary(f"/{service}/{method}", request_serializer=None,
                             response_deserializer=None)
        try:
            data = rpc(body, timeout=timeout)
        except grpc.RpcError as e:
            raise Bad(f"{method}: {e.code().name}: {e.details()}") from None
    if not isinstance(data, bytes):
        raise Bad(f"{method}: the response is {type(data).__name__}, not bytes")
    resp = decode(resp_msg, data, method)
    for f in required:
        if f not in resp:
            raise Bad(f"{method}: the response has no {f} ({len(data)} bytes: {data[:64].hex()})")
    return resp


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "--decode" and argv[2] in SCHEMA:
            print(json.dumps(decode(argv[2], sys.stdin.buffer.read())))
        elif len(argv) in (3, 4) and not argv[1].startswith("--"):
            resp = call(argv[1], argv[2], argv[3] if len(argv) == 4 else "{}", 60)
            print(json.dumps(resp))
        else:
            print(__doc__.split("\n\n")[1], file=sys.stderr)
            return 2
    except Bad as e:
        print(f"cri-client: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
