# SPDX-License-Identifier: MIT
# Certificates made for a test, with openssl: a CA, a server certificate for
# localhost/127.0.0.1 and a client certificate, all signed by the CA, plus a
# self-signed client certificate no CA vouches for.  Source after lib.sh.

# make_ca DIR NAME: DIR/NAME.crt, DIR/NAME.key
make_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=$2" -keyout "$1/$2.key" -out "$1/$2.crt" 2>/dev/null
}

# make_cert DIR NAME CA PURPOSE(serverAuth|clientAuth) SAN: DIR/NAME.crt, DIR/NAME.key
make_cert() {
	local d=$1 name=$2 ca=$3 purpose=$4 san=$5
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
		-keyout "$d/$name.key" -out "$d/$name.csr" 2>/dev/null
	printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$san" "$purpose" >"$d/$name.ext"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/$ca.crt" -CAkey "$d/$ca.key" \
		-CAcreateserial -days 2 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
}

# make_tls_set DIR: ca, server, client (signed by ca) and rogue (self-signed)
make_tls_set() {
	make_ca "$1" ca &&
		make_cert "$1" server ca serverAuth "DNS:localhost,IP:127.0.0.1" &&
		make_cert "$1" client ca clientAuth "DNS:prometheus.test" &&
		make_ca "$1" rogue
}

# bcrypt HASH of a password, the way the exporter-toolkit documents it.
bcrypt_hash() {
	htpasswd -nbBC "${2:-10}" "" "$1" | tr -d ':\n'
}

# The SHA-256 fingerprint of the certificate a TLS server at HOST:PORT presents.
served_fingerprint() {
	openssl s_client -connect "$1" -servername localhost </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null
}
export -f served_fingerprint # for the checks that run it in bash -c
