/**
 * @module
 * An OpenAPI document as a tool source: `openApiTools` turns each operation of a small
 * inventory API (served here on loopback with node:http) into a local tool, called from one
 * script through codecall.
 *
 * Run from the repository root: `node --no-node-snapshot examples/library/openapi-tools.ts`
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CodecallRuntime, localTools, openApiTools, parseConfig } from 'codecall';

const STOCK: Record<string, number> = { apple: 12, pear: 0 };

// The API: GET /items/{name} and POST /orders.
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    response.setHeader('content-type', 'application/json');
    const item = /^\/v1\/items\/([a-z]+)$/.exec(request.url ?? '');
    if (request.method === 'GET' && item && item[1]! in STOCK) {
      response.end(JSON.stringify({ name: item[1], stock: STOCK[item[1]!] }));
    } else if (request.method === 'POST' && request.url === '/v1/orders') {
      const order = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name: string; quantity: number };
      response.statusCode = 201;
      response.end(JSON.stringify({ id: 1, ...order }));
    } else {
      response.statusCode = 404;
      response.end(JSON.stringify({ error: `no such item or route: ${request.url}` }));
    }
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

// The document (usually: JSON.parse(await readFile('openapi.json', 'utf8'))).
const spec = {
  openapi: '3.0.3',
  info: { title: 'Inventory', version: '1.0.0' },
  paths: {
    '/items/{name}': {
      get: {
        operationId: 'getItem',
        summary: 'Stock of one item.',
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The item.' } },
      },
    },
    '/orders': {
      post: {
        operationId: 'createOrder',
        summary: 'Order an item.',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
        },
        responses: { '201': { description: 'The order.' } },
      },
    },
  },
  components: {
    schemas: {
      Order: {
        type: 'object',
        required: ['name', 'quantity'],
        properties: { name: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
      },
    },
  },
};

const inventory = await openApiTools(spec, { baseUrl, headers: { authorization: 'Bearer demo' } });
try {
  await using runtime = await CodecallRuntime.open({
    config: parseConfig({ mcpServers: {} }, { file: '<openapi example>' }),
    history: false,
    tools: { transports: { inventory: localTools(inventory) } },
  });
  const result = await runtime.execute(`
for (const name of ['apple', 'pear', 'plum']) {
  try {
    const item = await tools.inventory.getItem({ name });
    if (item.stock > 0) {
      const order = await tools.inventory.createOrder({ body: { name, quantity: 2 } });
      console.log('ordered', order.quantity, order.name);
    } else {
      console.log(name, 'is out of stock');
    }
  } catch (error) {
    console.log(name, '->', error.message);
  }
}
`);
  console.log(result.stdout.trim());
} finally {
  server.close();
}
