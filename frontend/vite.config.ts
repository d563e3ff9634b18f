import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Django serves dist/index.html at "/" and the built assets under /static/app/.
const backend = 'http://127.0.0.1:8000';

export default defineConfig({
  base: '/static/app/',
  plugins: [react()],
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
  },
});
