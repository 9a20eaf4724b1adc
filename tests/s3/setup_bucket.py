#!/usr/bin/env python3
"""Fill the S3 API server of tests/js/s3.test.mjs: a private bucket `fixtures` (no public
read, as most data buckets), with the CORS configuration a viewer on another origin needs,
holding every file of tests/fixtures/data/ under the same keys.
    setup_bucket.py ENDPOINT_URL"""
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3

endpoint = sys.argv[1]
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test",
                  region_name="us-east-1")
s3.create_bucket(Bucket="fixtures")
s3.put_bucket_cors(Bucket="fixtures", CORSConfiguration={"CORSRules": [{
    "AllowedOrigins": ["*"], "AllowedMethods": ["GET", "HEAD"], "AllowedHeaders": ["Range"],
    "ExposeHeaders": ["Content-Range", "Content-Length", "ETag"], "MaxAgeSeconds": 3000}]})
root = Path(__file__).resolve().parents[1] / "fixtures" / "data"
files = [p for p in sorted(root.rglob("*")) if p.is_file()]


def put(p: Path) -> None:
    s3.put_object(Bucket="fixtures", Key=p.relative_to(root).as_posix(), Body=p.read_bytes())


# Eight at a time: moto answers each slowly, one after another takes half a minute.
with ThreadPoolExecutor(8) as pool:
    list(pool.map(put, files))
print(f"uploaded {len(files)} objects")
