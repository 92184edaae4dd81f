// A protocol-level fake of S3 for the real @aws-sdk/client-s3 (REST-XML, path-style requests, as
// the SDK sends them to an IP endpoint). Only what a snapshot upload uses, each as documented:
// - Amazon S3 API Reference, "PutObject": PUT /bucket/key; the ETag is the MD5 of the body.
// - "CreateMultipartUpload" (POST ?uploads), "UploadPart" (PUT ?partNumber=N&uploadId=U; part
//   numbers 1 to 10,000), "CompleteMultipartUpload" (POST ?uploadId=U with the parts' numbers and
//   ETags, ascending, each one uploaded: else InvalidPartOrder / InvalidPart), and
//   "AbortMultipartUpload" (DELETE ?uploadId=U; its parts are dropped, the upload is gone).
// - Amazon S3 User Guide, "Amazon S3 multipart upload limits": every part but the last at least
//   5 MiB (else EntityTooSmall on Complete), at most 10,000 parts.
// - "Protecting data with server-side encryption": x-amz-server-side-encryption is AES256 or
//   aws:kms; anything else is InvalidArgument.
// - API Reference, "Error responses": the XML <Error><Code/><Message/></Error> body, NoSuchBucket
//   for a bucket that does not exist, NoSuchUpload for an upload id it does not know, 503
//   SlowDown ("Please reduce your request rate"), the failure mode a test can set for parts.
// - "Authenticating Requests (AWS Signature Version 4)": every request signed; a payload hash in
//   x-amz-content-sha256 must be the body's (XAmzContentSHA256Mismatch).
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { AwsFakeError, serveOnLoopback } from './http.ts';

export const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PART_NUMBER = 10_000;

export interface S3FakeObject {
  body: Buffer;
  etag: string;
  metadata: Record<string, string>;
  serverSideEncryption?: string;
  contentType?: string;
}

interface Upload {
  bucket: string;
  key: string;
  parts: Map<number, { body: Buffer; etag: string }>;
  metadata: Record<string, string>;
  serverSideEncryption?: string;
  contentType?: string;
}

export type S3Operation = 'PutObject' | 'CreateMultipartUpload' | 'UploadPart' | 'CompleteMultipartUpload' | 'AbortMultipartUpload';

export interface S3Fake {
  readonly endpoint: string;
  /** Objects by "bucket/key". */
  readonly objects: Map<string, S3FakeObject>;
  /** Uploads neither completed nor aborted, by upload id. */
  openUploads(): { bucket: string; key: string; parts: number }[];
  /** Every request, in order, with its answer's status. */
  readonly calls: { operation: S3Operation; key: string; status: number }[];
  /** The next `count` UploadPart requests are answered 503 SlowDown. */
  slowDownParts(count: number): void;
  close(): Promise<void>;
}

const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex');
const xmlEscape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const metadataOf = (req: IncomingMessage): Record<string, string> =>
  Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, value]) =>
      name.startsWith('x-amz-meta-') && typeof value === 'string' ? [[name.slice('x-amz-meta-'.length), value]] : [],
    ),
  );

function encryptionOf(req: IncomingMessage): string | undefined {
  const sse = req.headers['x-amz-server-side-encryption'];
  if (sse === undefined) return undefined;
  if (sse !== 'AES256' && sse !== 'aws:kms') throw new AwsFakeError(400, 'InvalidArgument', `The encryption method specified is not supported: ${String(sse)}`);
  return sse;
}

/** The parts a CompleteMultipartUpload body lists, in its order. */
function listedParts(xml: string): { partNumber: number; etag: string }[] {
  const parts = [...xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map((m) => {
    const number = /<PartNumber>(\d+)<\/PartNumber>/.exec(m[1]!)?.[1];
    const etag = /<ETag>([\s\S]*?)<\/ETag>/.exec(m[1]!)?.[1];
    if (number === undefined || etag === undefined)
      throw new AwsFakeError(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema');
    return { partNumber: Number(number), etag: etag.replace(/&quot;/g, '"') };
  });
  if (parts.length === 0)
    throw new AwsFakeError(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema');
  return parts;
}

export async function startS3Fake(options: { buckets: string[] }): Promise<S3Fake> {
  const buckets = new Set(options.buckets);
  const objects = new Map<string, S3FakeObject>();
  const uploads = new Map<string, Upload>();
  const calls: S3Fake['calls'] = [];
  let slowDowns = 0;

  function operationOf(method: string, query: URLSearchParams): S3Operation {
    if (method === 'POST' && query.has('uploads')) return 'CreateMultipartUpload';
    if (method === 'PUT' && query.has('uploadId')) return 'UploadPart';
    if (method === 'POST' && query.has('uploadId')) return 'CompleteMultipartUpload';
    if (method === 'DELETE' && query.has('uploadId')) return 'AbortMultipartUpload';
    if (method === 'PUT') return 'PutObject';
    throw new AwsFakeError(501, 'NotImplemented', `the fake does not implement ${method} with ${[...query.keys()].join(', ') || 'no query'}`);
  }

  function uploadOf(query: URLSearchParams, bucket: string, key: string): Upload {
    const upload = uploads.get(query.get('uploadId') ?? '');
    if (!upload || upload.bucket !== bucket || upload.key !== key) {
      throw new AwsFakeError(
        404,
        'NoSuchUpload',
        'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
      );
    }
    return upload;
  }

  function handle(
    operation: S3Operation,
    req: IncomingMessage,
    query: URLSearchParams,
    bucket: string,
    key: string,
    body: Buffer,
  ): { status: number; headers?: Record<string, string>; xml?: string } {
    switch (operation) {
      case 'PutObject': {
        const etag = `"${md5(body)}"`;
        const sse = encryptionOf(req);
        objects.set(`${bucket}/${key}`, {
          body,
          etag,
          metadata: metadataOf(req),
          ...(sse ? { serverSideEncryption: sse } : {}),
          ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        });
        return { status: 200, headers: { etag, ...(sse ? { 'x-amz-server-side-encryption': sse } : {}) } };
      }
      case 'CreateMultipartUpload': {
        const uploadId = randomUUID();
        const sse = encryptionOf(req);
        uploads.set(uploadId, {
          bucket,
          key,
          parts: new Map(),
          metadata: metadataOf(req),
          ...(sse ? { serverSideEncryption: sse } : {}),
          ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        });
        return {
          status: 200,
          headers: sse ? { 'x-amz-server-side-encryption': sse } : {},
          xml: `<InitiateMultipartUploadResult><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
        };
      }
      case 'UploadPart': {
        const upload = uploadOf(query, bucket, key);
        const partNumber = Number(query.get('partNumber'));
        if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
          throw new AwsFakeError(400, 'InvalidArgument', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`);
        }
        if (slowDowns > 0) {
          slowDowns -= 1;
          throw new AwsFakeError(503, 'SlowDown', 'Please reduce your request rate.');
        }
        const etag = `"${md5(body)}"`;
        upload.parts.set(partNumber, { body, etag });
        return { status: 200, headers: { etag } };
      }
      case 'CompleteMultipartUpload': {
        const upload = uploadOf(query, bucket, key);
        const listed = listedParts(body.toString('utf8'));
        // The list as a whole first (its order, then every part uploaded with its ETag), then the sizes.
        if (listed.some((part, i) => i > 0 && part.partNumber <= listed[i - 1]!.partNumber)) {
          throw new AwsFakeError(
            400,
            'InvalidPartOrder',
            'The list of parts was not in ascending order. The parts list must be specified in order by part number.',
          );
        }
        const chosen = listed.map((part) => {
          const uploaded = upload.parts.get(part.partNumber);
          if (!uploaded || uploaded.etag !== part.etag) {
            throw new AwsFakeError(
              400,
              'InvalidPart',
              "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.",
            );
          }
          return uploaded;
        });
        if (chosen.slice(0, -1).some((part) => part.body.length < MIN_PART_BYTES))
          throw new AwsFakeError(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.');
        const etag = `"${md5(Buffer.concat(chosen.map((p) => Buffer.from(p.etag.replace(/"/g, ''), 'hex'))))}-${chosen.length}"`;
        objects.set(`${bucket}/${key}`, {
          body: Buffer.concat(chosen.map((p) => p.body)),
          etag,
          metadata: upload.metadata,
          ...(upload.serverSideEncryption ? { serverSideEncryption: upload.serverSideEncryption } : {}),
          ...(upload.contentType ? { contentType: upload.contentType } : {}),
        });
        uploads.delete(query.get('uploadId')!);
        return {
          status: 200,
          xml: `<CompleteMultipartUploadResult><Location>http://fake/${xmlEscape(bucket)}/${xmlEscape(key)}</Location><Bucket>${xmlEscape(bucket)}</Bucket><Key>${xmlEscape(key)}</Key><ETag>${xmlEscape(etag)}</ETag></CompleteMultipartUploadResult>`,
        };
      }
      case 'AbortMultipartUpload':
        uploadOf(query, bucket, key);
        uploads.delete(query.get('uploadId')!);
        return { status: 204 };
    }
  }

  const respond = (res: ServerResponse, status: number, headers: Record<string, string>, xml?: string) => {
    const payload = xml === undefined ? '' : `<?xml version="1.0" encoding="UTF-8"?>\n${xml}`;
    res.writeHead(status, {
      'x-amz-request-id': randomUUID(),
      'content-length': Buffer.byteLength(payload),
      ...(xml === undefined ? {} : { 'content-type': 'application/xml' }),
      ...headers,
    });
    res.end(payload);
  };

  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const [, bucket = '', ...rest] = url.pathname.split('/');
        const key = rest.map((s) => decodeURIComponent(s)).join('/');
        let operation: S3Operation = 'PutObject';
        try {
          if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '))
            throw new AwsFakeError(403, 'AccessDenied', 'the request is not signed with SigV4');
          operation = operationOf(req.method ?? 'GET', url.searchParams);
          const claimed = req.headers['x-amz-content-sha256'];
          if (typeof claimed === 'string' && /^[0-9a-f]{64}$/.test(claimed) && claimed !== createHash('sha256').update(body).digest('hex')) {
            throw new AwsFakeError(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
          }
          if (!buckets.has(decodeURIComponent(bucket))) throw new AwsFakeError(404, 'NoSuchBucket', 'The specified bucket does not exist');
          if (key === '') throw new AwsFakeError(501, 'NotImplemented', 'the fake implements object requests only');
          const answer = handle(operation, req, url.searchParams, decodeURIComponent(bucket), key, body);
          calls.push({ operation, key, status: answer.status });
          respond(res, answer.status, answer.headers ?? {}, answer.xml);
        } catch (error) {
          const e = error instanceof AwsFakeError ? error : new AwsFakeError(500, 'InternalError', String(error));
          calls.push({ operation, key, status: e.status });
          respond(
            res,
            e.status,
            {},
            `<Error><Code>${e.code}</Code><Message>${xmlEscape(e.message)}</Message><BucketName>${xmlEscape(decodeURIComponent(bucket))}</BucketName></Error>`,
          );
        }
      },
      () => res.destroy(),
    );
  });
  const served = await serveOnLoopback(server);
  return {
    ...served,
    objects,
    calls,
    openUploads: () => [...uploads.values()].map((u) => ({ bucket: u.bucket, key: u.key, parts: u.parts.size })),
    slowDownParts: (count) => void (slowDowns = count),
  };
}
