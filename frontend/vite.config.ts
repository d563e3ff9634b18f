import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vitest/config';

// Django serves dist/index.html at "/" and the built assets under /static/app/.
const backend = 'http://127.0.0.1:8000';

/**
 * Writes `.br` and `.gz` beside every built text asset (Node's own zlib). WhiteNoise
 * serves them to browsers that accept them (Content-Encoding, Vary), and serves the
 * hashed `assets/` files with a year-long immutable cache (dbspweb/settings.py).
 */
function precompress(): Plugin {
  const compressible = /\.(js|mjs|css|html|svg|json|map|txt)$/;
  return {
    name: 'dbspweb-precompress',
    apply: 'build',
    writeBundle(options) {
      const dir = options.dir ?? 'dist';
      const walk = (d: string): string[] =>
        readdirSync(d).flatMap((name) => (statSync(join(d, name)).isDirectory() ? walk(join(d, name)) : [join(d, name)]));
      for (const file of walk(dir)) {
        if (!compressible.test(file)) continue;
        const data = readFileSync(file);
        if (data.length < 1024) continue; // not worth a second request path
        writeFileSync(`${file}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }));
        writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  base: '/static/app/',
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
  },
  server: {
    // changeOrigin stays false so Django sees the same Host as the browser's
    // Origin header and its CSRF origin check passes through the proxy.
    proxy: {
      '/api': { target: backend },
      '/admin': { target: backend },
      '/ws': { target: backend, ws: true },
    },
  },
  test: {
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'node',
    // One generous limit, as the browser tests have (tests/browser/chromium.py): on a busy
    // machine a layout or a render takes seconds, which is slow, not wrong.
    testTimeout: 60_000,
  },
});
