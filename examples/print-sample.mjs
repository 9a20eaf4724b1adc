// Open a sample array over HTTP with the built package and print its metadata and one chunk.
//   node examples/print-sample.mjs <array URL>
// e.g. node examples/print-sample.mjs http://127.0.0.1:8080/tests/fixtures/data/zp/shard_gzip_end
import { open, ShardedArray, ShardfetchError } from "../pkg/index.js";

const url = process.argv[2];
if (!url) {
  console.error("usage: node examples/print-sample.mjs <array or group URL>");
  process.exit(2);
}

try {
  const node = await open(url);
  if (!(node instanceof ShardedArray)) {
    console.log(`group ${node.url}`);
    console.log(`  attributes: ${JSON.stringify(node.attributes)}`);
    process.exit(0);
  }
  const arr = node;
  console.log(`array ${arr.url}`);
  console.log(`  shape:          [${arr.shape.join(", ")}]`);
  console.log(`  dtype:          ${arr.dtype}`);
  console.log(`  chunk shape:    [${arr.chunkShape.join(", ")}]`);
  console.log(`  shard shape:    ${arr.shardShape ? `[${arr.shardShape.join(", ")}]` : "(not sharded)"}`);
  console.log(`  fill value:     ${String(arr.fillValue)}`);
  console.log(`  dimensions:     ${arr.dimensionNames ? JSON.stringify(arr.dimensionNames) : "-"}`);
  console.log(`  attributes:     ${JSON.stringify(arr.attributes)}`);

  const coords = arr.shape.map(() => 0);
  const t0 = performance.now();
  const { data, shape, stride } = await arr.getChunk(coords);
  const ms = (performance.now() - t0).toFixed(1);
  console.log(`chunk [${coords.join(", ")}]: shape [${shape.join(", ")}], stride [${stride.join(", ")}], ${data.constructor.name} (${ms} ms)`);
  // print up to 8 x 12 values of the first 2-d plane
  const rows = shape.length >= 2 ? Math.min(shape[shape.length - 2], 8) : 1;
  const cols = shape.length >= 1 ? Math.min(shape[shape.length - 1], 12) : 1;
  const rs = shape.length >= 2 ? stride[stride.length - 2] : 0;
  const cs = shape.length >= 1 ? stride[stride.length - 1] : 0;
  for (let r = 0; r < rows; r++) {
    const vals = [];
    for (let c = 0; c < cols; c++) vals.push(String(data[r * rs + c * cs]).padStart(7));
    console.log(" " + vals.join(" ") + (cols < (shape.at(-1) ?? 1) ? " …" : ""));
  }
  arr.close();
} catch (e) {
  if (e instanceof ShardfetchError) {
    console.error(`error ${e.code}${e.status ? ` (HTTP ${e.status})` : ""}: ${e.message}`);
    process.exit(1);
  }
  throw e;
}
