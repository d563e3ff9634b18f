// A circuit opened by its share link: read-only, with a Fork button.

import { useEffect, useState } from 'react';
import { editorApi, type EditorCircuit } from '../api/editor';
import { signupHref } from '../route';
import { CircuitWorkspace } from './CircuitPage';
import { ErrorText, messagesOf } from './ErrorText';

export function SharedPage({ token, username }: { token: string; username: string | null }) {
  const [circuit, setCircuit] = useState<EditorCircuit | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  useEffect(() => {
    editorApi.shared(token).then(setCircuit, (e) => setErrors(messagesOf(e)));
  }, [token]);
  if (errors.length) return <ErrorText messages={errors} testId="shared-error" />;
  if (!circuit) return <p className="muted">Loading…</p>;
  return (
    <>
      {!username && (
        <p className="readonly-banner">
          <a href="/">Sign in</a> or <a href={`/${signupHref}`}>create an account</a> to fork this circuit.
        </p>
      )}
      <CircuitWorkspace circuit={circuit} runs={[]} readOnly signedIn={username !== null} onCircuit={setCircuit} shareToken={token} />
    </>
  );
}
