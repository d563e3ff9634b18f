// The engine's validation of the document on screen, debounced; stale answers are dropped.

import { useEffect, useRef, useState } from 'react';
import { editorApi, type Validation } from '../api/editor';
import { messagesOf } from '../components/ErrorText';
import type { Doc } from './model';

export function useValidation(doc: Doc, onValidation?: (validation: Validation | null) => void) {
  const [validation, setValidation] = useState<Validation | null>(null);
  const [validating, setValidating] = useState(false);
  const [validationError, setValidationError] = useState<string[]>([]);
  const seqRef = useRef(0);
  useEffect(() => {
    const seq = ++seqRef.current;
    setValidating(true);
    const timer = setTimeout(() => {
      editorApi.validate(doc).then(
        (v) => {
          if (seq !== seqRef.current) return;
          setValidation(v);
          setValidationError([]);
          setValidating(false);
          onValidation?.(v);
        },
        (err) => {
          if (seq !== seqRef.current) return;
          setValidationError(messagesOf(err));
          setValidating(false);
          onValidation?.(null);
        },
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [doc, onValidation]);
  return { validation, validating, validationError };
}
