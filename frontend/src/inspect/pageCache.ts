// Which server pages a virtualised table needs: the rows in sight (plus a margin) map to
// page numbers; pages already loaded or being fetched are not asked for again. Only the
// pages scrolled through are ever fetched, so a 10^6-row state costs a few pages.

import type { WeightedRow } from '../zset';

/** Pages (from 1) holding rows first..last (0-based, inclusive), at most `count` rows. */
export function pagesFor(first: number, last: number, pageSize: number, count: number): number[] {
  if (count <= 0 || last < first) return [];
  const from = Math.max(0, first);
  const to = Math.min(count - 1, last);
  if (to < from) return [];
  const pages: number[] = [];
  for (let p = Math.floor(from / pageSize) + 1; p <= Math.floor(to / pageSize) + 1; p++) pages.push(p);
  return pages;
}

/** Loaded pages of one query (node, tick, kind, sort, filters). */
export class PageCache {
  private readonly pages = new Map<number, WeightedRow[]>();
  private readonly asked = new Set<number>();

  constructor(readonly pageSize: number) {}

  /** The row at `index`, or undefined while its page is not loaded. */
  row(index: number): WeightedRow | undefined {
    return this.pages.get(Math.floor(index / this.pageSize) + 1)?.[index % this.pageSize];
  }

  put(page: number, rows: WeightedRow[]): void {
    this.pages.set(page, rows);
    this.asked.add(page);
  }

  /** Of `wanted`, the pages nobody asked for yet; they count as asked from now on. */
  claim(wanted: number[]): number[] {
    const fresh = wanted.filter((p) => !this.asked.has(p));
    fresh.forEach((p) => this.asked.add(p));
    return fresh;
  }

  /** A fetch that failed: the page may be asked for again. */
  release(page: number): void {
    if (!this.pages.has(page)) this.asked.delete(page);
  }

  get loaded(): number {
    return this.pages.size;
  }
}
