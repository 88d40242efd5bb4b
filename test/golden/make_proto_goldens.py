#!/usr/bin/env python3
"""Writes the golden protobuf messages (doc/protocol.md#protobuf) with Python's protobuf package.

The C++ tests (test/unit/core/wire/proto_codec_test.cpp) build the same values with tinker-cpp's
types, encode them with `tinker::to_protobuf` and compare the bytes with these files; they also
decode these files with `tinker::from_protobuf`. Python's protobuf is the reference because the
official SDK uses it. The values below and the ones in the C++ test must stay in sync: each
golden's docstring in GOLDENS says what it holds.

Bytes are stable: `SerializeToString(deterministic=True)` sorts map entries by key, and no map
entry has a default value (the pure-Python and C++ backends disagree on whether those are
written). Floats are chosen to be exact in float32 unless a test needs a rounding case.

Usage: make_proto_goldens.py --pb2-dir DIR --out-dir DIR
  --pb2-dir  where `protoc --python_out` put tinker_public_pb2.py (same .proto as the C++ code)
  --out-dir  where the .bin files go (the build's test/golden directory)
"""

import argparse
import math
import struct
import sys
from pathlib import Path

SENTINEL = (0, -99999.0)  # an empty top-k cell (token 0, logprob -99999)


def le(fmt, values):
    """Packs `values` as a little-endian array; fmt is a struct code ('i', 'q', 'f', 'H')."""
    return struct.pack("<%d%s" % (len(values), fmt), *values)


def bf16(value):
    """The bfloat16 bits of a float32 that is exactly representable in bfloat16."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    assert bits & 0xFFFF == 0, value
    return bits >> 16


def batched(pb, dtype, fmt, per_datum, trailing=()):
    """A BatchedTensor of per-datum flat arrays with byte offsets."""
    itemsize = struct.calcsize("<" + fmt)
    offsets, data = [0], b""
    for values in per_datum:
        data += le(fmt, values)
        offsets.append(offsets[-1] + len(values) * itemsize)
    return pb.BatchedTensor(data=data, offsets=le("q", offsets), dtype=dtype, trailing_shape=list(trailing))


def fb_request(pb):
    """ForwardBackwardRequest, every chunk kind and tensor form.

    model_id "golden-model-0", seq_id 7, loss_fn "ppo", forward_only false,
    loss_fn_config {clip_low_threshold: 0.75, clip_high_threshold: 1.25}.
    data[0]: chunks encoded_text [1, 2, 3, 70000, 2147483647, -5],
                    image png bytes 89 50 4E 47 0D 0A 1A 0A 00 01 expected_tokens 4,
                    dmel bytes 01 02 03 02 AA BB;
             inputs target_tokens int64 [2, 3, 70000, 5, 2^40, -1] (no shape),
                    advantages float32 [0.5, -1.25, 2.0, 0.0, 3.5, -0.0] shape [6],
                    logprobs float32 [-0.5, -1, -2, -4, -8, -16] shape [2, 3].
    data[1]: chunks encoded_text [42], image jpeg bytes FF D8 FF E0 (no expected_tokens);
             inputs target_tokens int64 [10..15] shape [2, 3],
                    advantages float32 CSR shape [2, 3] values [1.5, -2.0] crow [0, 1, 2] col [2, 0],
                    weights float32 [] (empty, no shape).
    """
    d0 = pb.Datum(model_input=[
        pb.Chunk(encoded_text=pb.EncodedTextChunk(tokens=le("i", [1, 2, 3, 70000, 2147483647, -5]))),
        pb.Chunk(image=pb.ImageChunk(data=bytes.fromhex("89504E470D0A1A0A0001"), format="png", expected_tokens=4)),
        pb.Chunk(dmel=pb.DmelChunk(dmel=bytes.fromhex("01020302AABB"))),
    ])
    d0.loss_fn_inputs["target_tokens"].CopyFrom(
        pb.Tensor(dense=le("q", [2, 3, 70000, 5, 2**40, -1]), dtype=pb.DTYPE_INT64))
    d0.loss_fn_inputs["advantages"].CopyFrom(
        pb.Tensor(dense=le("f", [0.5, -1.25, 2.0, 0.0, 3.5, -0.0]), dtype=pb.DTYPE_FLOAT32, shape=[6]))
    d0.loss_fn_inputs["logprobs"].CopyFrom(
        pb.Tensor(dense=le("f", [-0.5, -1, -2, -4, -8, -16]), dtype=pb.DTYPE_FLOAT32, shape=[2, 3]))
    d1 = pb.Datum(model_input=[
        pb.Chunk(encoded_text=pb.EncodedTextChunk(tokens=le("i", [42]))),
        pb.Chunk(image=pb.ImageChunk(data=bytes.fromhex("FFD8FFE0"), format="jpeg")),
    ])
    d1.loss_fn_inputs["target_tokens"].CopyFrom(
        pb.Tensor(dense=le("q", [10, 11, 12, 13, 14, 15]), dtype=pb.DTYPE_INT64, shape=[2, 3]))
    d1.loss_fn_inputs["advantages"].CopyFrom(pb.Tensor(
        sparse_csr=pb.SparseCsr(values=le("f", [1.5, -2.0]), crow_indices=le("q", [0, 1, 2]),
                                col_indices=le("q", [2, 0])),
        dtype=pb.DTYPE_FLOAT32, shape=[2, 3]))
    d1.loss_fn_inputs["weights"].CopyFrom(pb.Tensor(dense=b"", dtype=pb.DTYPE_FLOAT32))
    msg = pb.ForwardBackwardRequest(model_id="golden-model-0", seq_id=7, data=[d0, d1], loss_fn="ppo")
    msg.loss_fn_config["clip_low_threshold"] = 0.75
    msg.loss_fn_config["clip_high_threshold"] = 1.25
    return msg


def fb_request_forward_only(pb):
    """ForwardBackwardRequest for forward(): model_id "m", seq_id 1, loss_fn "cross_entropy",
    no loss_fn_config, forward_only true; one datum: encoded_text [5, 6, 7],
    target_tokens int64 [6, 7, 8], weights float32 [1, 1, 0.25]."""
    d = pb.Datum(model_input=[pb.Chunk(encoded_text=pb.EncodedTextChunk(tokens=le("i", [5, 6, 7])))])
    d.loss_fn_inputs["target_tokens"].CopyFrom(pb.Tensor(dense=le("q", [6, 7, 8]), dtype=pb.DTYPE_INT64))
    d.loss_fn_inputs["weights"].CopyFrom(pb.Tensor(dense=le("f", [1, 1, 0.25]), dtype=pb.DTYPE_FLOAT32))
    return pb.ForwardBackwardRequest(model_id="m", seq_id=1, data=[d], loss_fn="cross_entropy", forward_only=True)


def fb_output_one_record(pb):
    """ForwardBackwardOutput as a cross_entropy server writes it: loss_fn_output_type "ArrayRecord",
    one record (type_tag "ArrayRecord", num_datums 2) with float32 fields, trailing_shape [],
    logprobs [-0.25, -1.5, -3.0] | [-0.125] and elementwise_loss [0.25, 1.5, 3.0] | [0.125];
    metrics {"loss:sum": 4.875}."""
    record = pb.ArrayRecord(type_tag="ArrayRecord", num_datums=2)
    record.fields["logprobs"].CopyFrom(batched(pb, pb.DTYPE_FLOAT32, "f", [[-0.25, -1.5, -3.0], [-0.125]]))
    record.fields["elementwise_loss"].CopyFrom(batched(pb, pb.DTYPE_FLOAT32, "f", [[0.25, 1.5, 3.0], [0.125]]))
    msg = pb.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=[record])
    msg.metrics["loss:sum"] = 4.875
    return msg


def fb_output_two_records(pb):
    """ForwardBackwardOutput whose two datums differ in layout, so they take one record each:
    loss_fn_output_type "ArrayRecord"; record 0 (num_datums 1): logprobs float32 trailing [2]
    = [[1, 2], [3, 4]]; record 1 (num_datums 1): logprobs float32 trailing [3] = [[5, 6, 7]] and
    target_tokens int64 trailing [] = [9, -9]. metrics {"loss:sum": -2.5, "loss:mean": -1.25}."""
    r0 = pb.ArrayRecord(type_tag="ArrayRecord", num_datums=1)
    r0.fields["logprobs"].CopyFrom(batched(pb, pb.DTYPE_FLOAT32, "f", [[1, 2, 3, 4]], trailing=[2]))
    r1 = pb.ArrayRecord(type_tag="ArrayRecord", num_datums=1)
    r1.fields["logprobs"].CopyFrom(batched(pb, pb.DTYPE_FLOAT32, "f", [[5, 6, 7]], trailing=[3]))
    r1.fields["target_tokens"].CopyFrom(batched(pb, pb.DTYPE_INT64, "q", [[9, -9]]))
    msg = pb.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=[r0, r1])
    msg.metrics["loss:sum"] = -2.5
    msg.metrics["loss:mean"] = -1.25
    return msg


def fb_output_widened(pb):
    """ForwardBackwardOutput a reader must widen (decode only): loss_fn_output_type
    "tinker_backend.records:TorchLossReturn" (read as "TorchLossReturn"), no metrics.
    record 0 (num_datums 1): logprobs BFLOAT16 [1.0, -2.0, 0.5], target_tokens INT32 [7, -8, 9];
    record 1 (num_datums 2): logprobs BFLOAT16 [-0.25] | [], target_tokens INT32 [100] | [].
    Expected datums: {logprobs float32 [1, -2, 0.5] shape [3], target_tokens int64 [7, -8, 9]
    shape [3]}, {[-0.25] shape [1], [100] shape [1]}, {[] shape [0], [] shape [0]}."""
    r0 = pb.ArrayRecord(type_tag="TorchLossReturn", num_datums=1)
    r0.fields["logprobs"].CopyFrom(batched(pb, pb.DTYPE_BFLOAT16, "H", [[bf16(1.0), bf16(-2.0), bf16(0.5)]]))
    r0.fields["target_tokens"].CopyFrom(batched(pb, pb.DTYPE_INT32, "i", [[7, -8, 9]]))
    r1 = pb.ArrayRecord(type_tag="TorchLossReturn", num_datums=2)
    r1.fields["logprobs"].CopyFrom(batched(pb, pb.DTYPE_BFLOAT16, "H", [[bf16(-0.25)], []]))
    r1.fields["target_tokens"].CopyFrom(batched(pb, pb.DTYPE_INT32, "i", [[100], []]))
    return pb.ForwardBackwardOutput(loss_fn_output_type="tinker_backend.records:TorchLossReturn",
                                    loss_fn_outputs=[r0, r1])


def fb_output_legacy(pb):
    """ForwardBackwardOutput from a writer predating num_datums (decode only): one record with
    num_datums 0 and a float32 field logprobs trailing [] = [-1] | [-2, -3]; the reader takes the
    datum count (2) from the first field. metrics {"loss:sum": 6.0}."""
    record = pb.ArrayRecord(type_tag="ArrayRecord")
    record.fields["logprobs"].CopyFrom(batched(pb, pb.DTYPE_FLOAT32, "f", [[-1], [-2, -3]]))
    msg = pb.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=[record])
    msg.metrics["loss:sum"] = 6.0
    return msg


def sample_response(pb):
    """SampleResponse with every field: sequences
    [{stop, tokens [264, 1899, 13], logprobs [-0.4, -1.2, -0.01]}, {length, tokens [5, 6], no logprobs}],
    prompt_logprobs [NaN, -3.2, -0.7] (float32; NaN = null),
    top-k k=2 over 3 prompt positions: null row, [(1879, -0.2), (11, -1.9)], [(13, -0.1)] + one
    sentinel cell, prompt_cache_hit_tokens 12. (-0.4 etc. are rounded to float32 like `-0.4F`.)"""
    rows = [[SENTINEL, SENTINEL], [(1879, -0.2), (11, -1.9)], [(13, -0.1), SENTINEL]]
    topk = pb.TopkPromptLogprobs(
        token_ids=le("i", [t for row in rows for t, _ in row]),
        logprobs=le("f", [lp for row in rows for _, lp in row]), k=2, prompt_length=3)
    return pb.SampleResponse(
        sequences=[
            pb.SampledSequence(stop_reason=pb.STOP_REASON_STOP, tokens=le("i", [264, 1899, 13]),
                               logprobs=le("f", [-0.4, -1.2, -0.01])),
            pb.SampledSequence(stop_reason=pb.STOP_REASON_LENGTH, tokens=le("i", [5, 6])),
        ],
        prompt_logprobs=le("f", [math.nan, -3.2, -0.7]),
        topk_prompt_logprobs=topk,
        prompt_cache_hit_tokens=12)


def sample_response_empty_fields(pb):
    """SampleResponse whose optional fields are present but empty (decode only): one sequence
    {length, tokens [], logprobs b""}, prompt_logprobs b"", topk_prompt_logprobs with k=0 and
    prompt_length=0. Expected: one sequence {length, [], logprobs absent}, no prompt_logprobs,
    no top-k, prompt_cache_hit_tokens 0."""
    return pb.SampleResponse(
        sequences=[pb.SampledSequence(stop_reason=pb.STOP_REASON_LENGTH, tokens=b"", logprobs=b"")],
        prompt_logprobs=b"",
        topk_prompt_logprobs=pb.TopkPromptLogprobs(k=0, prompt_length=0))


GOLDENS = {
    "fb_request.bin": fb_request,
    "fb_request_forward_only.bin": fb_request_forward_only,
    "fb_output_one_record.bin": fb_output_one_record,
    "fb_output_two_records.bin": fb_output_two_records,
    "fb_output_widened.bin": fb_output_widened,
    "fb_output_legacy.bin": fb_output_legacy,
    "sample_response.bin": sample_response,
    "sample_response_empty_fields.bin": sample_response_empty_fields,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pb2-dir", required=True, type=Path)
    parser.add_argument("--out-dir", required=True, type=Path)
    args = parser.parse_args()

    sys.path.insert(0, str(args.pb2_dir))
    import tinker_public_pb2 as pb  # noqa: E402 (generated at build time)

    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, build in GOLDENS.items():
        data = build(pb).SerializeToString(deterministic=True)
        (args.out_dir / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
