#!/usr/bin/env python3
"""Tokenizes prepare_data.py's output with the SentencePiece model exactly as the engine's encode_chat does:
special tokens whole, every text run encoded on its own (no dummy prefix: the model is trained with
--add_dummy_prefix=false), <|endoftext|> after every document. Writes little-endian uint16 streams
(train.u16.xz, valid.u16) that train.py reads. Runs here (Debian: python3-sentencepiece, python3-numpy),
so the GPU machine spends no time on it.

    /usr/bin/python3 tokenize_data.py --data DIR --spm tokenizer.model --out DIR
"""
import argparse
import json
import lzma
import multiprocessing as mp
import os

import numpy as np

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
_SP = None


def _init_sp(path):
    global _SP
    import sentencepiece as spm
    _SP = spm.SentencePieceProcessor(model_file=path)


def encode_doc(line):
    """One train.jsonl line -> token ids (uint16), <|endoftext|> appended."""
    r = json.loads(line)
    ids = []
    if "t" in r:
        ids += _SP.encode(r["t"])
    else:
        for special, text in r["c"]:
            if special:
                ids.append(_SP.piece_to_id(text))
            elif text:
                ids += _SP.encode(text)
    ids.append(_SP.piece_to_id("<|endoftext|>"))
    return np.asarray(ids, dtype=np.uint16)


def tokenize_file(path, spm_path, workers):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = f.readlines()
    with mp.Pool(workers, initializer=_init_sp, initargs=(spm_path,)) as pool:
        docs = pool.map(encode_doc, lines, chunksize=512)
    return np.concatenate(docs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--spm", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    train = tokenize_file(os.path.join(args.data, "train.jsonl"), args.spm, args.workers)
    valid = tokenize_file(os.path.join(args.data, "valid_text.jsonl"), args.spm, args.workers)
    assert train.max() < 65536
    with lzma.open(os.path.join(args.out, "train.u16.xz"), "wb", preset=6) as f:
        f.write(train.astype("<u2").tobytes())
    valid.astype("<u2").tofile(os.path.join(args.out, "valid.u16"))
    print(json.dumps({"train_tokens": int(len(train)), "valid_tokens": int(len(valid))}))


if __name__ == "__main__":
    main()
