import { describe, expect, it } from 'vitest';
import { connectionHost } from '../../../src/util/connection-host.js';

describe('connectionHost', () => {
  it('names host and port, never the user or password of the URL', () => {
    const host = connectionHost('postgres://admin:s3cret@db.internal:5433/codecall');
    expect(host).toBe('db.internal:5433');
    expect(host).not.toContain('s3cret');
  });

  it('falls back to a generic name for text that is not a URL (which might be a secret)', () => {
    expect(connectionHost('s3cret not a url')).toBe('the database');
    expect(connectionHost('s3cret', 'Redis')).toBe('Redis');
  });
});
