#!/usr/bin/env python3
"""Writes the seed corpora of test/fuzz/corpus/ (doc/fuzzing.md) from the unit tests' data.

Usage: test/fuzz/make_corpus.py [--golden-dir BUILD/test/golden] [--hub-cache DIR]

JSON bodies are taken from the codec tests (every raw string literal passed to a from_json<T>-like
call, prefixed with the index of T in fuzz_json_decode.cpp's type list); protobuf seeds from the golden
files written by Python (test/golden, built by target tinker_proto_goldens); the other corpora are
written here, shaped like real traffic. Files are named by content hash, so re-running only adds.
"""
import argparse
import gzip
import hashlib
import io
import pathlib
import re
import struct
import tarfile
import zlib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    directory = HERE / "corpus" / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def json_types():
    text = (HERE / "fuzz_json_decode.cpp").read_text()
    body = text[text.index("using kTypes = std::tuple<") + len("using kTypes = std::tuple<"):text.index(">;")]
    body = re.sub(r"//[^\n]*", "", body)
    return [t.strip() for t in body.split(",") if t.strip()]


RAW_GROUP = re.compile(r'(?:R"\((.*?)\)"\s*)+', re.S)
RAW_ONE = re.compile(r'R"\((.*?)\)"', re.S)
TYPED_CALL = re.compile(r"<(\w+)>\(")


def json_seeds():
    types = json_types()
    index = {t: i for i, t in enumerate(types)}
    for name in ["observed_traffic_test.cpp", "json_malformed_test.cpp", "json_string_test.cpp"]:
        src = (ROOT / "test/unit/core/wire" / name).read_text()
        for group in RAW_GROUP.finditer(src):
            body = "".join(RAW_ONE.findall(group.group(0)))
            start = src.rfind(";", 0, group.start()) + 1
            before = TYPED_CALL.findall(src[start:group.start()])
            after = TYPED_CALL.search(src, group.end())
            t = before[-1] if before else (after.group(1) if after else None)
            if t in index:
                write("json_decode", bytes([index[t]]) + body.encode())
    # Answers the SDK decodes that the tests above hold few of.
    answers = {
        "TryAgainResponse": '{"type":"try_again","request_id":"r-1","queue_state":"paused_capacity",'
                            '"queue_state_reason":"busy"}',
        "FutureMetadataResponse": '{"status":"complete_metadata","request_id":"r-1","payload_size":1048576}',
        "RequestFailedResponse": '{"error":"bad input","category":"user"}',
        "UntypedAPIFuture": '{"request_id":"S:train:0:7","model_id":"S:train:0"}',
        "CreateSessionResponse": '{"session_id":"S-1","info_message":"hi","warning_message":null}',
        "SampleResponse": '{"sequences":[{"stop_reason":"length","tokens":[1,2,3],"logprobs":[-0.5,-1.25,-2.0]}],'
                          '"prompt_logprobs":[null,-1.5],"topk_prompt_logprobs":[null,[[5,-0.1],[6,-2.5]]],'
                          '"type":"sample"}',
        "ForwardBackwardOutput": '{"loss_fn_output_type":"cross_entropy","loss_fn_outputs":[{"logprobs":'
                                 '{"data":[-1.5,-0.25],"dtype":"float32","shape":[2]}}],"metrics":{"loss:sum":1.75}}',
        "CheckpointsListResponse": '{"checkpoints":[{"checkpoint_id":"weights/step-1","checkpoint_type":"training",'
                                   '"time":"2025-01-02T03:04:05.123456Z","tinker_path":"tinker://S:train:0/weights/step-1",'
                                   '"size_bytes":1234,"public":false,"expires_at":null}],'
                                   '"cursor":{"offset":0,"limit":20,"total_count":1}}',
        "CheckpointArchiveUrlResponse": '{"url":"https://storage.example/a.tar?X-Sig=1","expires":"2025-01-02T03:04:05Z"}',
        "GetServerCapabilitiesResponse": '{"supported_models":[{"model_name":"Qwen/Qwen3-8B"}]}',
        "TensorData": '{"data":[1.5,2],"dtype":"float32","shape":[1,3],"sparse_crow_indices":[0,2],'
                      '"sparse_col_indices":[0,2]}',
    }
    for t, body in answers.items():
        write("json_decode", bytes([index[t]]) + body.encode())


def protobuf_seeds(golden_dir):
    choices = {"fb_request": 0, "fb_output": 1, "sample_response": 2}
    for path in sorted(pathlib.Path(golden_dir).glob("*.bin")):
        choice = next(c for prefix, c in choices.items() if path.name.startswith(prefix))
        data = path.read_bytes()
        write("protobuf_decode", bytes([choice]) + data)
        if choice != 0:
            write("zstd", bytes([0xFF]) + zstd_frame(data))


def zstd_frame(data):
    try:
        import zstandard
        return zstandard.ZstdCompressor(level=3).compress(data)
    except ImportError:
        import subprocess
        return subprocess.run(["zstd", "-q", "-c", "-3"], input=data, capture_output=True, check=True).stdout


def zstd_seeds():
    write("zstd", bytes([0x10]) + zstd_frame(b'{"model_id":"S:train:0","seq_id":1}' * 20))
    write("zstd", bytes([0x00]) + zstd_frame(b"x" * 300))  # over a 0-byte limit
    write("zstd", bytes([0x01]) + zstd_frame(b""))


def http_seeds():
    answers = [
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"status\":\"ok\"}\n",
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        "7\r\n{\"a\":1}\r\n0\r\n\r\n",
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nx-request-id: req-9\r\nContent-Type: application/json\r\n"
        "Content-Length: 27\r\n\r\n{\"detail\":\"slow down, pls\"}",
        "HTTP/1.1 503 Service Unavailable\r\nretry-after-ms: 1500\r\nx-should-retry: true\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nbad gateway",
        "HTTP/1.1 302 Found\r\nLocation: /files/archive.tar\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 302 Found\r\nLocation: https://cdn.example/a.tar\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/8\r\nContent-Length: 4\r\n\r\nabcd",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nContent-Length: 28\r\n\r\n{\"error\":\"x\",\"category\":\"user\"}",
        "HTTP/1.0 200 OK\r\n\r\nbody until close",
    ]
    for answer in answers:
        for mode in (0, 1):
            write("http_response", bytes([mode]) + answer.encode())


def retry_after_seeds():
    for choice, value in [(0, "1500"), (0, "250.5"), (1, "2"), (1, "0.5"), (1, "Sun, 01 Jun 2025 12:00:30 GMT"),
                          (1, "Sunday, 01-Jun-25 12:00:30 GMT"), (1, "Sun Jun  1 12:00:30 2025"),
                          (2, "100\nSun, 01 Jun 2025 12:00:30 GMT"), (3, "Sun, 06 Nov 1994 08:49:37 GMT"),
                          (3, "Sunday, 06-Nov-94 08:49:37 GMT"), (3, "Sun Nov  6 08:49:37 1994"), (1, "-1"),
                          (1, "1e400"), (0, "nan")]:
        write("retry_after", bytes([choice]) + value.encode())


def poll_answer_seeds():
    # First byte: the Content-Type (0 JSON, 1 protobuf, 2 text, 3 none), as in fuzz_poll_answer.cpp.
    bodies = [
        '{"type":"try_again","request_id":"r-1","queue_state":"active"}',
        '{"type":"try_again","request_id":"r-1","queue_state":"paused_rate_limit","queue_state_reason":"busy"}',
        '{"type":"try_again","queue_state":null}',
        '{"status":"complete_metadata","request_id":"r-1","response_payload_size":1048576}',
        '{"error":"bad batch","category":"user"}',
        '{"error":{"detail":[1,2]},"category":"server"}',
        '{"loss_fn_output_type":"ArrayRecord","loss_fn_outputs":[],"metrics":{"loss:sum":1.5}}',
        '[1,2,3]', '{"type":', '',
    ]
    for body in bodies:
        for content_type in (0, 3):
            write("poll_answer", bytes([content_type]) + body.encode())
    write("poll_answer", bytes([1]) + b"\x0a\x0cArrayRecord")
    write("poll_answer", bytes([2]) + b"upstream connect error")


def url_seeds():
    seeds = [
        (0, "tinker://S-1:train:0/weights/step-10"), (0, "tinker://run/sampler_weights/final"),
        (0, "tinker://run/weights/"), (0, "tinker:///weights/x"),
        (1, "https://storage.example/bucket/ckpt.tar?X-Amz-Signature=abc&X-Amz-Expires=300"),
        (1, "http://127.0.0.1:8080/_downloads/tok"), (1, "https://[::1]:443/a"), (1, "ftp://x/y"),
        (2, "http://user:pass@proxy.example:3128"), (2, "proxy.example"), (2, "http://[::1]:8080/"),
        (3, "localhost,.example.com,10.0.0.1,[::1]:8080,*\nsub.example.com:443"), (3, "*\nanything"),
        (4, "bytes 0-99/1000"), (4, "bytes 100-199/*"), (4, "bytes 5-4/10"),
        (5, "2025-01-02T03:04:05.123456Z"), (5, "2025-01-02T03:04:05+02:00"), (5, "1970-01-01T00:00:00Z"),
        (6, "https://tinker.thinkingmachines.dev/services/tinker-prod"), (6, "http://127.0.0.1:8000"),
        (6, "https://host:8x"),
        (7, "./weights/adapter.safetensors"), (7, "a//b/../c"), (7, "/etc/passwd"), (7, "dir/"),
    ]
    for choice, text in seeds:
        write("urls", bytes([choice]) + text.encode())


def jwt_seeds():
    import base64
    import json

    def b64(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    write("jwt", b64({"alg": "HS256", "typ": "JWT"}) + "." + b64({"sub": "user-1", "exp": 1750000000}) + ".c2ln")
    write("jwt", "a.b")
    write("jwt", "eyJ.eyJ.")


def tokenizer_seeds():
    data = ROOT / "test/data/tokenizer"
    # A small BPE tokenizer.json in the shape of Qwen's (byte-level pre-tokenizer and decoder, added tokens).
    vocab = {chr(c): i for i, c in enumerate(range(33, 127))}
    vocab.update({"Ġ": len(vocab), "He": len(vocab) + 1, "ll": len(vocab) + 2})
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 200, "content": "<|im_end|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+|\\s+"},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": ["H e", "l l"]},
    }
    import json
    write("tokenizer_files", b"\x00" + json.dumps(tok).encode())
    write("tokenizer_files", b"\x03" + json.dumps({
        "bos_token": "<s>", "eos_token": {"content": "</s>", "special": True}, "pad_token": None,
        "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}",
        "added_tokens_decoder": {"200": {"content": "<|im_end|>", "special": True}}}).encode())
    import base64
    ranks = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))
    ranks += f"{base64.b64encode(b'He').decode()} 256\n{base64.b64encode(b'll').decode()} 257\n"
    write("tokenizer_files", b"\x02" + ranks.encode())
    del data


def hub_cache_seeds(hub_cache):
    """tinker-local's own tokenizer files, from the hub cache a fuzz_local_request run fills."""
    for path in sorted(pathlib.Path(hub_cache).glob("models--tinker-local--tiny-*-1k/snapshots/*/*")):
        prefix = {"tokenizer.json": b"\x00", "tokenizer.model": b"\x01", "tokenizer_config.json": b"\x03"}.get(path.name)
        if prefix:
            write("tokenizer_files", prefix + path.read_bytes())


def tar_bytes(entries, compress=False):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, kind, payload in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1700000000
            if kind == "file":
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = payload.decode()
                tar.addfile(info)
    data = buffer.getvalue()
    return gzip.compress(data, mtime=0) if compress else data


def archive_seeds():
    good = [("adapter_config.json", "file", b'{"r": 8}'), ("weights", "dir", b""),
            ("weights/adapter.safetensors", "file", b"\x00" * 600)]
    write("archive_extract", b"\x00" + tar_bytes(good))
    write("archive_extract", b"\x00" + tar_bytes(good, compress=True))
    write("archive_extract", b"\x01" + tar_bytes(good))
    write("archive_extract", b"\x02" + tar_bytes(good))
    for bad in [[("../escape", "file", b"x")], [("/abs", "file", b"x")], [("link", "symlink", b"/etc/passwd")],
                [("a", "file", b"x"), ("hard", "hardlink", b"a")], [("a", "file", b"x"), ("./a", "file", b"y")]]:
        write("archive_extract", b"\x01" + tar_bytes(bad))


def fault_rule_seeds():
    for spec in ["retrieve_future:status=429,retry_after=seconds:2,prob=0.2",
                 "forward_backward:reset_before,calls=1+3", "*:delay=250ms,max=2", "_downloads:truncated_body",
                 "asample:status=503,retry_after=http_date:3,should_retry=true",
                 "sample:status=429,retry_after=ms:1500", "forward_backward:pause_queue=2s,state=paused_rate_limit",
                 "tokenizer.json:malformed_json", "x:status=99"]:
        write("fault_rules", b"\x00" + spec.encode())
    for duration in ["250ms", "2s", "1.5s", "100", "-1s", "1e30s"]:
        write("fault_rules", b"\x01" + duration.encode())
    write("fault_rules", b"\x02" + b'[{"endpoint":"retrieve_future","kind":"status","status":429,'
                                   b'"retry_after":"http_date","retry_after_ms":2000,"probability":0.5,'
                                   b'"on_calls":[1,3],"max_fires":2,"should_retry":true},'
                                   b'"forward_backward:reset_mid_body"]')
    write("fault_rules", b"\x02" + b'[{"endpoint":"*","kind":"pause_queue","delay_ms":10,'
                                   b'"queue_state":"paused_capacity"}]')


def local_request_seeds(golden_dir):
    key = "X-API-Key: tml-fuzz-key\r\n"

    def post(path, body, content_type="application/json", extra=""):
        if isinstance(body, str):
            body = body.encode()
        head = (f"POST /api/v1/{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{key}Content-Type: {content_type}\r\n{extra}"
                f"Content-Length: {len(body)}\r\n\r\n")
        return head.encode() + body

    def get(path):
        return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{key}\r\n".encode()

    session = post("create_session", '{"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"}')
    write("local_request", get("/api/v1/healthz"))
    write("local_request", get("/api/v1/get_server_capabilities"))
    write("local_request", post("client/config", '{"sdk_version":"0.25.0"}'))
    write("local_request", session)
    write("local_request", session + post(
        "create_model", '{"session_id":"S","model_seq_id":0,"base_model":"tinker-local/tiny-lm",'
        '"lora_config":{"rank":8,"seed":0,"train_unembed":true,"train_mlp":true,"train_attn":true},'
        '"type":"create_model"}'))
    write("local_request", post(
        "forward_backward", '{"forward_backward_input":{"data":[{"model_input":{"chunks":[{"tokens":[1,2,3],'
        '"type":"encoded_text"}]},"loss_fn_inputs":{"target_tokens":{"data":[2,3,4],"dtype":"int64","shape":[3]},'
        '"weights":{"data":[1,1,1],"dtype":"float32","shape":[3]}}}],"loss_fn":"cross_entropy"},'
        '"model_id":"S:train:0","seq_id":1}'))
    write("local_request", post("retrieve_future", '{"request_id":"S:train:0:1","allow_metadata_only":true}',
                                extra="X-Tinker-Request-Type: ForwardBackward\r\n"))
    write("local_request", post(
        "asample", '{"num_samples":1,"prompt":{"chunks":[{"tokens":[11,12],"type":"encoded_text"}]},'
        '"sampling_params":{"max_tokens":4,"seed":1,"temperature":0.7,"top_k":-1,"top_p":1.0},'
        '"sampling_session_id":"S:sample:0","seq_id":0,"type":"sample"}'))
    write("local_request", get("/api/v1/training_runs?limit=5&offset=0"))
    write("local_request", get("/api/v1/training_runs/S:train:0/checkpoints/weights%2Fstep-1/archive"))
    write("local_request", get("/tinker-local/tiny-bpe-1k/resolve/main/tokenizer.json"))
    write("local_request", get("/_admin/requests"))
    write("local_request", b"POST /api/v1/telemetry HTTP/1.1\r\nHost: x\r\n" + key.encode() +
          b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"ev\"\r\n8\r\nents\":[]\r\n1\r\n}\r\n0\r\n\r\n")
    golden = pathlib.Path(golden_dir) / "fb_request.bin"
    if golden.exists():
        proto = golden.read_bytes()
        write("local_request", post("forward_backward", proto, "application/x-protobuf"))
        write("local_request", post("forward_backward", zstd_frame(proto), "application/x-protobuf",
                                    "Content-Encoding: zstd\r\n"))
    write("local_request", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n")


def png_file(width, height, color_type, depth, pixel, interlaced=False, palette=None, trns=None):
    """A PNG written field by field (filter 0 on every row); pixel(x, y) gives the row bytes of one pixel."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    def rows(xs, ys):
        return b"".join(b"\x00" + b"".join(pixel(x, y) for x in xs) for y in ys) if xs else b""

    if interlaced:  # Adam7: each pass a sub-image of every pixel on its grid
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        raw = b"".join(rows(range(x0, width, dx), range(y0, height, dy)) for x0, y0, dx, dy in passes)
    else:
        raw = rows(range(width), range(height))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0,
                                                                1 if interlaced else 0))
    if palette:
        png += chunk(b"PLTE", palette)
    if trns:
        png += chunk(b"tRNS", trns)
    return png + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def image_seeds():
    # PNGs of every colour type are written here; the JPEG and WebP seeds (baseline, progressive with
    # EXIF, grey, CMYK; lossy, lossless, VP8X with alpha) were written by the encoders themselves
    # through test/support/image_samples.cpp and are committed as they are.
    def rgb(x, y):
        return bytes([x * 40 % 256, y * 60 % 256, (x + y) * 20 % 256])

    write("image_files", png_file(5, 3, 2, 8, rgb))
    write("image_files", png_file(7, 7, 2, 8, rgb, interlaced=True))
    write("image_files", png_file(4, 4, 0, 8, lambda x, y: bytes([x * 60 + y])))
    write("image_files", png_file(8, 2, 0, 1, lambda x, y: b"" if x else bytes([0x55 if y else 0xaa])))
    write("image_files", png_file(3, 3, 0, 16, lambda x, y: struct.pack(">H", x * 20000 + y)))
    write("image_files", png_file(4, 2, 3, 8, lambda x, y: bytes([(x + y) % 3]),
                                  palette=bytes([255, 0, 0, 0, 255, 0, 0, 0, 255]), trns=bytes([128])))
    write("image_files", png_file(3, 2, 4, 8, lambda x, y: bytes([x * 80, y * 200])))
    write("image_files", png_file(3, 3, 6, 8, lambda x, y: rgb(x, y) + bytes([x * 100])))
    write("image_files", png_file(2, 2, 6, 16, lambda x, y: struct.pack(">HHHH", x * 60000, y * 60000, 1000, 65535)))


def safetensors_file(header, data=b""):
    """A safetensors file: 8-byte little-endian header length, the header JSON text, the data."""
    if isinstance(header, str):
        header = header.encode()
    return struct.pack("<Q", len(header)) + header + data


def safetensors_seeds():
    def tensor(dtype, shape, begin, end):
        return '{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}' % (dtype, str(list(shape)).replace(" ", ""), begin, end)

    floats = struct.pack("<4f", 1.5, -2.0, 0.25, 3.0)
    halves = struct.pack("<4H", 0x3c00, 0x7c00, 0x7e00, 0x0001)  # 1, inf, NaN, smallest subnormal
    valid = [
        ('{"__metadata__":{"format":"pt"},"a":%s,"b":%s}' % (tensor("F32", [2, 2], 0, 16), tensor("F16", [4], 16, 24)),
         floats + halves),
        ('{"w":%s,"s":%s}' % (tensor("BF16", [2, 2], 0, 8), tensor("F64", [], 8, 16)),
         halves + struct.pack("<d", -0.5)),
        ('{"e":%s,"i":%s}' % (tensor("F32", [0, 3], 0, 0), tensor("I32", [2], 0, 8)), struct.pack("<2i", 7, -7)),
        ('{"q":%s,"scales":%s,"flag":%s}' % (tensor("U8", [2, 2], 0, 4), tensor("F8_E8M0", [2], 4, 6),
                                           tensor("BOOL", [1], 6, 7)), bytes([1, 2, 3, 4, 127, 128, 1])),
        ("{}", b""),
    ]
    for header, data in valid:
        padded = header + " " * (-len(header) % 8)  # as the reference writer pads
        write("safetensors", safetensors_file(padded, data))
    broken = [
        ('{"x":%s}' % tensor("U8", [10], 10, 20), b"d" * 16),  # past the data
        ('{"a":%s,"b":%s}' % (tensor("F32", [2], 0, 8), tensor("F32", [2], 4, 12)), floats),  # overlap
        ('{"x":%s}' % tensor("F32", [3], 0, 8), floats),  # length is not dtype x shape
        ('{"x":%s}' % tensor("F32", [4294967296, 4294967296], 0, 0), b""),  # size overflow
        ('{"x":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}', b"\x11"),  # unknown dtype
        ('{"__metadata__":{"step":3}}', b""),  # metadata value not a string
        ('{"x":' + "[" * 40 + "]" * 40 + "}", b""),  # too deep
    ]
    for header, data in broken:
        write("safetensors", safetensors_file(header, data))
    write("safetensors", struct.pack("<Q", 123456789012) + b"{}")  # header length past the file
    write("safetensors", b"\x02\x00\x00")  # shorter than the length prefix


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--golden-dir", default=str(ROOT / "build/fuzz/test/golden"))
    parser.add_argument("--hub-cache", help="tinker-local's hub cache (/tmp/tinker-fuzz-hub-cache after a "
                                            "fuzz_local_request run): its tokenizer files become seeds")
    args = parser.parse_args()
    json_seeds()
    protobuf_seeds(args.golden_dir)
    zstd_seeds()
    http_seeds()
    retry_after_seeds()
    poll_answer_seeds()
    url_seeds()
    jwt_seeds()
    tokenizer_seeds()
    if args.hub_cache:
        hub_cache_seeds(args.hub_cache)
    archive_seeds()
    fault_rule_seeds()
    local_request_seeds(args.golden_dir)
    image_seeds()
    safetensors_seeds()


if __name__ == "__main__":
    main()
