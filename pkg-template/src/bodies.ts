/**
 * Answers are never left unread on the wire: a body the package does not read is cancelled at
 * once, and one that must wait for its reader is read as it arrives. Node's `fetch` (its
 * bundled undici, before undici 8) ends the process with an uncatchable error when a server
 * closes a connection whose answer sits unread under backpressure (undici#5360); elsewhere an
 * unread body holds its connection and buffers.
 * @internal
 */

/** Cancel `response`'s body unless something reads it; a failed stream's rejection is ignored. */
export function cancelBody(response: Response | undefined): void {
  const body = response?.body;
  if (body && !body.locked) body.cancel().catch(() => undefined);
}

/**
 * `response` with its body read as it arrives, up to `ahead` bytes queued, for a reader that
 * takes it later (the module still loading): the same status, headers and bytes, and an error
 * where the original body fails. Cancelling it cancels the original.
 */
export function readAhead(response: Response, ahead: number): Response {
  const source = response.body;
  if (source === null || source.locked) return response;
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: Math.max(1, ahead), size: (chunk) => chunk.byteLength },
  );
  try {
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } catch {
    // (Not a status a constructed Response may have: the original, its body reader released.)
    reader.releaseLock();
    return response;
  }
}
