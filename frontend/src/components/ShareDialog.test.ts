import { describe, expect, it } from 'vitest';
import { versionList, type ShareInfo } from '../api/editor';
import { shareLink } from './ShareDialog';

describe('share link', () => {
  const info: ShareInfo = { visibility: 'unlisted', share_token: 'tok_1', share_url: '', share_api_url: '', link_active: true, grants: [] };

  it('uses the server’s share_url, made absolute', () => {
    expect(shareLink({ ...info, share_url: '/#/shared/tok_1' }, 'http://h:1')).toBe('http://h:1/#/shared/tok_1');
    expect(shareLink({ ...info, share_url: 'http://x/#/shared/tok_1' }, 'http://h:1')).toBe('http://x/#/shared/tok_1');
  });

  it('falls back to /shared/<token>, and to nothing without a token', () => {
    expect(shareLink(info, 'http://h:1')).toBe('http://h:1/shared/tok_1');
    expect(shareLink({ ...info, share_token: '' }, 'http://h:1')).toBeNull();
  });
});

describe('version list', () => {
  const v = (number: number) => ({ number, document: { format: 'dbspweb.circuit', version: 1, nodes: [], edges: [] }, valid: true, problems: [], created_at: '' });

  it('accepts a list or a page and puts the newest first', () => {
    expect(versionList([v(1), v(3), v(2)]).map((x) => x.number)).toEqual([3, 2, 1]);
    expect(versionList({ count: 2, next: null, previous: null, results: [v(1), v(2)] }).map((x) => x.number)).toEqual([2, 1]);
  });
});
