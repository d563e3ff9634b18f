import { useState, type FormEvent } from 'react';
import { editorApi } from '../api/editor';
import { navigate } from '../route';
import { ErrorText, messagesOf } from './ErrorText';

/** Create an account; the server logs the new user in. */
export function SignupForm({ onSignedUp }: { onSignedUp: (username: string) => void }) {
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (password !== confirm) {
      setErrors(['password: the two passwords differ.']);
      return;
    }
    setBusy(true);
    setErrors([]);
    try {
      const result = await editorApi.register(username, password, email || undefined);
      onSignedUp(result.username ?? username);
      navigate('#/');
    } catch (error) {
      setErrors(messagesOf(error));
      setBusy(false);
    }
  }

  return (
    <form className="card login" onSubmit={submit} data-testid="signup-form">
      <h1>Create an account</h1>
      <label>
        Username
        <input data-testid="signup-username" name="username" autoComplete="username" autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
      </label>
      <label>
        Email (optional)
        <input data-testid="signup-email" name="email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        Password
        <input data-testid="signup-password" name="password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      <label>
        Repeat password
        <input data-testid="signup-confirm" name="confirm" type="password" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)} />
      </label>
      <ErrorText messages={errors} testId="signup-error" />
      <button type="submit" className="primary" data-testid="signup-submit" disabled={busy}>
        {busy ? 'Creating…' : 'Sign up'}
      </button>
      <p className="muted">
        Have an account? <a
          href="#/"
          data-testid="to-login"
          onClick={(e) => {
            e.preventDefault();
            navigate('#/');
          }}
        >
          Sign in
        </a>
      </p>
    </form>
  );
}
