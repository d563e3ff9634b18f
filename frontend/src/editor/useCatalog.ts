// Loads the operator catalog and the circuit format once per page and shares them.

import { useEffect, useState } from 'react';
import { editorApi, type JsonSchema, type Operator } from '../api/editor';
import { paramSchemas, portCatalog, withRecursion } from './catalog';
import type { PortCatalog } from './model';

export interface Catalog {
  operators: Operator[];
  ports: PortCatalog;
  params: Record<string, JsonSchema>;
}

let loading: Promise<Catalog> | null = null;

export function loadCatalog(): Promise<Catalog> {
  if (!loading) {
    loading = Promise.all([editorApi.operators(), editorApi.circuitFormat()]).then(
      ([ops, format]) => {
        const operators = withRecursion(ops);
        return { operators, ports: portCatalog(operators), params: paramSchemas(format, operators) };
      },
      (error) => {
        loading = null;
        throw error;
      },
    );
  }
  return loading;
}

export function useCatalog(): { catalog: Catalog | null; error: unknown } {
  const [catalog, setCatalog] = useState<Catalog | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let active = true;
    loadCatalog().then(
      (c) => active && setCatalog(c),
      (e) => active && setError(e),
    );
    return () => {
      active = false;
    };
  }, []);
  return { catalog, error };
}
