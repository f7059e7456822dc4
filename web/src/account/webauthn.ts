// WebAuthn ceremonies: the server's options (base64url fields) to the browser API and back.
const b64u = (buf: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const unb64u = (s: string) =>
  Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));

export async function createCredential(o: any) {
  const cred = (await navigator.credentials.create({
    publicKey: {
      ...o,
      challenge: unb64u(o.challenge),
      user: { ...o.user, id: unb64u(o.user.id) },
      excludeCredentials: (o.excludeCredentials || []).map((c: any) => ({ ...c, id: unb64u(c.id) })),
    },
  })) as PublicKeyCredential;
  const r = cred.response as AuthenticatorAttestationResponse;
  return {
    id: cred.id,
    rawId: b64u(cred.rawId),
    type: cred.type,
    clientExtensionResults: {},
    response: { clientDataJSON: b64u(r.clientDataJSON), attestationObject: b64u(r.attestationObject), transports: r.getTransports?.() ?? [] },
  };
}

export async function getAssertion(o: any) {
  const cred = (await navigator.credentials.get({
    publicKey: {
      ...o,
      challenge: unb64u(o.challenge),
      allowCredentials: (o.allowCredentials || []).map((c: any) => ({ ...c, id: unb64u(c.id) })),
    },
  })) as PublicKeyCredential;
  const r = cred.response as AuthenticatorAssertionResponse;
  return {
    id: cred.id,
    rawId: b64u(cred.rawId),
    type: cred.type,
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64u(r.clientDataJSON),
      authenticatorData: b64u(r.authenticatorData),
      signature: b64u(r.signature),
      userHandle: r.userHandle ? b64u(r.userHandle) : null,
    },
  };
}

/** RSA-OAEP (SHA-256) of the password with A27's public key, base64: the reference's client format. */
export async function encryptPassword(publicKeyPem: string, password: string) {
  const der = Uint8Array.from(atob(publicKeyPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey('spki', der, { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
  const ct = await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, key, new TextEncoder().encode(password));
  return btoa(String.fromCharCode(...new Uint8Array(ct)));
}
